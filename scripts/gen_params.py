"""Generates what the core's parameter declarations imply, so that nothing declares a
parameter twice (docs/architecture.md, "Parameters declared once"):

- python/dsim/_params.py: one builder function per configuration table (`dsim.red`,
  `dsim.srtcm`, ...) with its signature, type hints and a docstring giving each key's
  meaning, unit, default, range and document section;
- the parameter tables of the documentation: in docs/*.md, the lines between
  `<!-- params NAME -->` and `<!-- /params -->` become the table of the table NAME (a Rust
  type, e.g. `RedSpec`).

Everything comes from `dsim._dsim.schema()`, the declarations of dsim-core
(crates/dsim-core/src/params). Run after changing a declaration:

    .venv/bin/python scripts/gen_params.py          # rewrite the files
    .venv/bin/python scripts/gen_params.py --check  # exit 1 if any is out of date (tests)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "python" / "dsim" / "_params.py"
DOCS = ROOT / "docs"


@dataclass(frozen=True)
class Builder:
    """A Python builder: the table it writes, its `type` (for a table chosen by type) and
    the keys it takes positionally (the rest are keyword-only)."""

    table: str
    tag: str | None
    positional: tuple[str, ...]


#: The builders, by Python name. Only the Python ergonomics are said here (which keys are
#: positional); every key, its meaning, unit and default come from the schema.
BUILDERS: dict[str, Builder] = {
    # queues (link and class disciplines)
    "droptail": Builder("DroptailSpec", "droptail", ("limit",)),
    "red": Builder("RedSpec", "red", ("limit", "min_th", "max_th")),
    "mred": Builder("MredSpec", "mred", ("limit", "precedence")),
    "precedence": Builder("PrecedenceSpec", None, ("min_th", "max_th", "max_p")),
    "_dsd": Builder("DsdSpec", "dsd", ("buffer", "d")),
    "codel": Builder("CodelSpec", "codel", ()),
    "pie": Builder("PieSpec", "pie", ()),
    "fq_codel": Builder("FqCodelSpec", "fq_codel", ()),
    "dsd_red": Builder("DsdRedSpec", None, ("min_th", "max_th")),
    "dsd_control": Builder("DsdControlSpec", None, ()),
    # schedulers (classes given one by one in scenario.py's wrappers)
    "_priority": Builder("PrioritySpec", "priority", ("classes",)),
    "_wrr": Builder("WrrSpec", "wrr", ("classes",)),
    "_drr": Builder("DrrSpec", "drr", ("classes",)),
    "_cbq": Builder("CbqSpec", "cbq", ("scheduler", "classes")),
    "priority_class": Builder("PriorityClass", None, ("dscp",)),
    "wrr_class": Builder("WrrClass", None, ("dscp",)),
    "drr_class": Builder("DrrClass", None, ("dscp",)),
    "cbq_class": Builder("CbqClass", None, ("dscp",)),
    "cbq_interior": Builder("CbqInterior", None, ("name", "share")),
    # meters, shapers, policers
    "token_bucket": Builder("TokenBucketSpec", "token_bucket", ("rate", "depth")),
    "tsw": Builder("TswSpec", "tsw", ("target", "window")),
    "tsw3": Builder("Tsw3Spec", "tsw3", ("committed", "peak", "window")),
    "srtcm": Builder("SrtcmSpec", "srtcm", ("cir", "cbs", "ebs")),
    "trtcm": Builder("TrtcmSpec", "trtcm", ("cir", "cbs", "pir", "pbs")),
    "tb_shaper": Builder("TbShaperSpec", "token_bucket", ("rate", "depth", "limit")),
    "_srras": Builder("SrrasSpec", "srras", ("cir",)),
    "_trras": Builder("TrrasSpec", "trras", ("cir", "pir")),
    "ef_policer": Builder("EfPolicerSpec", None, ("rate", "burst")),
    "match": Builder("MatchSpec", None, ()),
    # traffic
    "cbr": Builder("CbrSpec", "cbr", ("rate", "size", "spacing_variation")),
    "poisson": Builder("PoissonSpec", "poisson", ("rate", "size")),
    "tfrc": Builder("TfrcSpec", "tfrc", ("size",)),
    "ftp": Builder("FtpSpec", "ftp", ("bytes",)),
    "web": Builder("WebSpec", "web", ("response", "think", "request")),
    "tcp": Builder("TcpSpec", None, ("variant",)),
    "cubic": Builder("CubicSpec", None, ()),
    "dctcp": Builder("DctcpSpec", None, ()),
    "constant": Builder("ConstantDist<Bytes>", "constant", ("value",)),
    "exponential": Builder("ExponentialDist<Bytes>", "exponential", ("mean", "max")),
    "pareto": Builder("ParetoDist<Bytes>", "pareto", ("mean", "shape", "max")),
    "lognormal": Builder("LognormalDist<Bytes>", "lognormal", ("mean", "sigma", "max")),
    "drop": Builder("DropRuleSpec", None, ("flow",)),
}

#: Distributions draw sizes or times: their builders say both.
GENERIC_UNIT = {"ConstantDist<Bytes>", "ExponentialDist<Bytes>", "ParetoDist<Bytes>", "LognormalDist<Bytes>"}

UNIT_WORDS = {
    "rate": 'a rate ("10Mbps")',
    "bytes": 'a size ("1500B", "64KB")',
    "duration": 'a time ("10ms")',
    "limit": 'packets ("100p") or bytes ("64KB")',
    "fraction": 'a fraction (0.1 or "10%")',
    "float": "a number",
    "integer": "a whole number",
    "bool": "true or false",
    "dscp": 'a codepoint (a name such as "AF11" or a number 0-63)',
    "text": "a text",
}


def schema() -> dict[str, Any]:
    """The core's schema, from the built extension alone (the package imports what this
    script writes, so it is not imported)."""
    import importlib.util

    found = sorted((ROOT / "python" / "dsim").glob("_dsim*.so"))
    if not found:
        raise SystemExit("build the extension first (make build, or maturin develop)")
    spec = importlib.util.spec_from_file_location("dsim._dsim", found[0])
    assert spec and spec.loader
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    return json.loads(ext.schema())


def one_line(text: str) -> str:
    """Paragraphs of a doc comment as single lines, joined by blank lines."""
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "\n\n".join(paras)


def unit_words(kind: Any, tables: dict[str, Any], generic: bool) -> str:
    if isinstance(kind, str):
        if generic and kind == "bytes":
            return 'a size ("12KB") or a time ("1s"), as the key that holds the distribution'
        return UNIT_WORDS[kind]
    (what, arg), = kind.items()
    if what == "choice":
        return "one of " + ", ".join(f'"{n}"' for n in arg)
    if what == "table":
        return f"a table ({arg})"
    if what == "one_of":
        return "a table chosen by `type`: " + ", ".join(f'"{t}"' for t in arg)
    if what == "list":
        return "a list of " + unit_words(arg, tables, generic)
    if what == "map":
        return "a table of names to " + unit_words(arg, tables, generic)
    return arg  # custom: the type says it in words


def hint(kind: Any) -> str:
    if isinstance(kind, str):
        return {
            "float": "float",
            "integer": "int",
            "bool": "bool",
            "fraction": "float | str",
            "dscp": "str | int",
        }.get(kind, "str")
    (what, arg), = kind.items()
    if what == "choice":
        return "str"
    if what in ("table", "one_of"):
        return "dict[str, Any]"
    if what == "list":
        return f"list[{hint(arg)}]"
    if what == "map":
        return f"dict[str, {hint(arg)}]"
    return "Any"


def key_doc(k: dict[str, Any], tables: dict[str, Any], generic: bool) -> str:
    parts = [one_line(k["help"]).replace("\n\n", " ") or "(undocumented)"]
    facts = [unit_words(k["kind"], tables, generic)]
    if k["required"]:
        facts.append("required")
    elif k["default"] is not None:
        facts.append(f"default {k['default']}")
    if k["range"]:
        facts.append(f"range {k['range']}")
    if k["nonempty"]:
        facts.append("not empty")
    if k["section"]:
        facts.append(f"section {k['section']}")
    return f"{parts[0]} [{'; '.join(facts)}]"


def builder_source(name: str, b: Builder, tables: dict[str, Any]) -> str:
    t = tables[b.table]
    keys = {k["key"]: k for k in t["keys"]}
    unknown = [p for p in b.positional if p not in keys]
    if unknown:
        raise SystemExit(f"{name}: positional keys {unknown} are not keys of {b.table}")
    pos = [keys[p] for p in b.positional]
    kw = [k for k in t["keys"] if k["key"] not in b.positional]
    late = [k["key"] for i, k in enumerate(pos) if k["required"] and any(not q["required"] for q in pos[:i])]
    if late:
        raise SystemExit(f"{name}: required {late} after an optional positional key")

    def param(k: dict[str, Any]) -> str:
        return f"{k['key']}: {hint(k['kind'])}" + ("" if k["required"] else " | None = None")

    params = [param(k) for k in pos] + (["*", *(param(k) for k in kw)] if kw else [])
    lines = textwrap.wrap(one_line(t["doc"]).replace("\n\n", " ") or b.table, width=88)
    if t["document"]:
        lines += ["", *textwrap.wrap(f"Document: {t['document']}.", width=88)]
    lines += ["", "Args:"]
    generic = b.table in GENERIC_UNIT
    for k in pos + kw:
        text = key_doc(k, tables, generic)
        lines += textwrap.wrap(text, width=88, initial_indent=f"    {k['key']}: ", subsequent_indent="        ")
    lines += ["", "Keys left at None are left out of the table: the core's default applies."]
    docstring = "\n".join(("    " + line) if line else "" for line in lines).lstrip()
    signature = ",\n    ".join(params)
    tag = f'"{b.tag}"' if b.tag else "None"
    return (
        f"def {name}(\n    {signature},\n) -> dict[str, Any]:\n"
        f'    """{docstring}\n    """\n'
        f"    return _table({tag}, locals())\n"
    )


HEADER = '''"""Builders of the scenario's configuration tables, one per table.

Generated by scripts/gen_params.py from dsim._dsim.schema(), the parameter declarations of
dsim-core: do not edit; change the declaration in Rust and run the script. Public names are
re-exported by dsim.scenario (which adds the wrappers that take classes one by one, RIO's
notation and the like).
"""

from __future__ import annotations

from typing import Any


def _table(tag: str | None, args: dict[str, Any]) -> dict[str, Any]:
    """The table of a builder's arguments: `type` first when it has one, None left out."""
    table: dict[str, Any] = {"type": tag} if tag else {}
    table.update((k, v) for k, v in args.items() if v is not None)
    return table
'''


def python_module(tables: dict[str, Any]) -> str:
    parts = [HEADER.rstrip() + "\n"]
    for name, b in BUILDERS.items():
        if b.table not in tables:
            raise SystemExit(f"{name}: no table {b.table} in the schema")
        parts.append(builder_source(name, b, tables))
    return "\n\n".join(parts)


def markdown_table(name: str, tables: dict[str, Any]) -> str:
    t = tables.get(name)
    if t is None:
        raise SystemExit(f"docs: no table {name} in the schema")
    rows = ["| key | value | default | range | meaning | section |", "|---|---|---|---|---|---|"]
    for k in t["keys"]:
        default = "required" if k["required"] else (f"`{k['default']}`" if k["default"] is not None else "-")
        rng = k["range"] or ("not empty" if k["nonempty"] else "")
        meaning = one_line(k["help"]).replace("\n\n", " ").replace("|", "\\|")
        value = unit_words(k["kind"], tables, name in GENERIC_UNIT).replace("|", "\\|")
        rows.append(f"| `{k['key']}` | {value} | {default} | {rng} | {meaning} | {k['section'] or ''} |")
    return "\n".join(rows)


MARKER = re.compile(r"(<!-- params (\S+) -->\n)(.*?)(<!-- /params -->)", re.DOTALL)


def docs(tables: dict[str, Any]) -> dict[Path, str]:
    out = {}
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        out[page] = MARKER.sub(lambda m: m.group(1) + markdown_table(m.group(2), tables) + "\n" + m.group(4), text)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is out of date")
    args = ap.parse_args()
    tables = schema()["tables"]
    wanted = {OUT: python_module(tables)} | docs(tables)
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)} (run scripts/gen_params.py)")
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
