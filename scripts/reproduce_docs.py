"""Rewrites the verdict blocks of the reproduction pages from a quick and a full report.

    dsim reproduce --out results/quick
    dsim reproduce abe --full --out results/full-abe     # ... family by family, or all at once
    .venv/bin/python scripts/reproduce_docs.py results/quick results/full-*

Each folder holds a report.json of either mode; the reports of one mode are merged.

A page holds one block per family, between ``<!-- reproduce FAMILY -->`` and
``<!-- /reproduce -->`` (``<!-- reproduce FAMILY skip=EXPERIMENT:TABLE,... -->`` leaves
tables out); the README's ``<!-- reproduce summary -->`` gets the counts of every family. The block gets the counts per experiment and kind in both modes, every
published table beside dsim's means (full mode), the claims, and the expected misses with
the reasons the full run rendered. Both reports must hold every experiment of the family
and no unexpected verdict.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from dsim.reproduce import registry
from dsim.reproduce.framework import Experiment, fmt

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- reproduce (\S+)(?: skip=(\S+))? -->\n.*?<!-- /reproduce -->", re.DOTALL)


def cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def dates(quick: dict[str, Any], full: dict[str, Any]) -> str:
    q, f = quick["date"][:10], full["date"][:10]
    return q if q == f else f"{q} and {f}"


def counted(e: dict[str, Any], kind: str) -> str:
    checks = [c for c in e["checks"] if c["kind"] == kind and c["verdict"] != "full only"]
    return f"{sum(c['verdict'] == 'pass' for c in checks)} / {len(checks)}" if checks else "-"


def block(family: str, skip: set[str], quick: dict[str, Any], full: dict[str, Any]) -> str:
    experiments = registry.select([family])
    q = {e["name"]: e for e in quick["experiments"]}
    f = {e["name"]: e for e in full["experiments"]}
    missing = [e.name for e in experiments if e.name not in q or e.name not in f]
    if missing:
        raise SystemExit(f"{family}: the reports lack {', '.join(missing)}")
    wrong = [(e.name, c["id"]) for r in (q, f) for e in experiments for c in r[e.name]["checks"] if c["unexpected"]] + [(e.name, r[e.name]["error"]) for r in (q, f) for e in experiments if r[e.name]["error"]]
    if wrong:
        raise SystemExit(f"{family}: unexpected verdicts or errors {wrong}: fix them before documenting")
    fq, ff = quick["families"][family], full["families"][family]
    out = [
        (f"`dsim reproduce {family}` (quick) and `dsim reproduce {family} --full`, runs of {dates(quick, full)} "
        f"({fq['wall_s']:.0f} s and {ff['wall_s']:.0f} s of runs on the shared 2-core machine): **{fq['reproduction']['passed']} of "
        f"{fq['reproduction']['checks']}** published numbers and claims reproduced in quick mode, **{ff['reproduction']['passed']} of "
        f"{ff['reproduction']['checks']}** in full mode; invariants {ff['invariant']['passed']} / {ff['invariant']['checks']}, set-up "
        f"checks {ff['set-up']['passed']} / {ff['set-up']['checks']} (full). Every check both modes decide has its expected verdict in "
        "both; the checks only full mode decides are listed at the end."),
        "",
        "| experiment | reproductions, quick | reproductions, full | invariants (quick; full) | set-up checks (quick; full) |",
        "|---|---|---|---|---|",
    ]
    for e in experiments:
        a, b = q[e.name], f[e.name]
        out.append(f"| `{e.name}` | {counted(a, 'reproduction')} | {counted(b, 'reproduction')} | {counted(a, 'invariant')}; {counted(b, 'invariant')} | {counted(a, 'set-up')}; {counted(b, 'set-up')} |")
    out.append("")
    for e in experiments:
        out += tables(e, {c["id"]: c for c in f[e.name]["checks"]}, skip)
    out += ["**Claims** (full run; dsim's means ± 90 % half widths):", "", "| experiment | claim | kind | dsim | verdict |", "|---|---|---|---|---|"]
    for e in experiments:
        for c in f[e.name]["checks"]:
            if c["form"] == "claim":
                shown = c["simulated"] if len(c["simulated"]) <= 160 else c["simulated"][:157] + "..."
                out.append(f"| `{e.name}` | {cell(c['text'])} | {c['kind']} | {cell(shown)} | {c['verdict']} |")
    out += ["", "**Expected misses** (their class, and the reason as the full run prints it):", ""]
    for e in experiments:
        out += misses(e, {c["id"]: c for c in f[e.name]["checks"]})
    full_only = [f"- `{e.name}`: `{cid}`: {why}." for e in experiments for cid, why in e.full_only.items()]
    if full_only:
        out += ["", "**Decided in full mode only**:", "", *full_only]
    return "\n".join(out)


def tables(e: Experiment, checks: dict[str, dict[str, Any]], skip: set[str]) -> list[str]:
    out = []
    for t in e.tables:
        if f"{e.name}:{t.id}" in skip:
            continue
        out += [f"**{e.name}, {t.title}** ({t.source}; {t.unit}; {t.kind}), published / dsim (✗ = miss):", ""]
        out += [f"| {t.row_label} | " + " | ".join(map(str, t.columns)) + " |", "|---|" + "---|" * len(t.columns)]
        for r in t.rows:
            cells = []
            for col in t.columns:
                c = checks.get(t.check_id(r, col))
                if c is None:
                    cells.append("")
                    continue
                value = fmt(c["value"]["mean"]) if c["value"] else "-"
                cells.append(f"{cell(c['published'])} / {value}" + (" ✗" if c["verdict"] == "miss" else ""))
            out.append(f"| {r} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def misses(e: Experiment, checks: dict[str, dict[str, Any]]) -> list[str]:
    """One line per reason: the checks whose reasons differ only in their numbers share it."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for cid, miss in e.expected.items():
        groups[(miss.cls, re.sub(r"[0-9][0-9.,]*", "#", checks[cid]["reason"]))].append(cid)
    out = []
    for (cls, _), ids in groups.items():
        first = " (as the first prints it)" if len(ids) > 1 else ""
        out.append(f"- `{e.name}`: {', '.join(f'`{i}`' for i in ids)}, *{cls}*{first}: {checks[ids[0]]['reason']}")
    return out


def merged(folders: list[str]) -> dict[str, dict[str, Any]]:
    """The reports of each mode, their experiments and families merged (the last wins)."""
    out: dict[str, dict[str, Any]] = {}
    for folder in folders:
        r = json.loads((Path(folder) / "report.json").read_text())
        m = out.setdefault(r["mode"], {"date": r["date"], "experiments": [], "families": {}})
        names = {e["name"] for e in r["experiments"]}
        m["experiments"] = [e for e in m["experiments"] if e["name"] not in names] + r["experiments"]
        m["families"] |= r["families"]
        m["date"] = max(m["date"], r["date"])
    return out


def summary(quick: dict[str, Any], full: dict[str, Any]) -> str:
    """The README's table: per family and kind, checks passed / checks in both modes."""
    families = registry.families()
    fq, ff = quick["families"], full["families"]
    missing = [f for f in families if f not in fq or f not in ff]
    if missing:
        raise SystemExit(f"the reports lack the families {', '.join(missing)}")

    def two(kind: str, f: str) -> str:
        a, b = fq[f][kind], ff[f][kind]
        return "-" if not a["checks"] and not b["checks"] else f"{a['passed']} / {a['checks']}; {b['passed']} / {b['checks']}"

    def total(r: dict[str, Any]) -> tuple[int, int]:
        return sum(r[f]["reproduction"]["passed"] for f in families), sum(r[f]["reproduction"]["checks"] for f in families)

    (qp, qn), (fp, fn) = total(fq), total(ff)
    out = [
        (f"Quick mode: **{qp} of {qn} published numbers and claims reproduced**; full mode: **{fp} of {fn}**. Checks passed / "
        f"checks, quick; full (quick: `make run`; full: `dsim reproduce FAMILY --full`; runs of {dates(quick, full)}, seconds of "
        "runs on the shared 2-core machine):"),
        "",
        "| family | reproductions | invariants | set-up checks | expected misses | runs s |",
        "|---|---|---|---|---|---|",
    ]
    out.extend(
        f"| `{f}` | {two('reproduction', f)} | {two('invariant', f)} | {two('set-up', f)} | "
        f"{fq[f]['reproduction']['expected_misses']}; {ff[f]['reproduction']['expected_misses']} | {fq[f]['wall_s']:.0f}; {ff[f]['wall_s']:.0f} |"
        for f in families
    )
    return "\n".join(out)


def main(folders: list[str]) -> None:
    reports = merged(folders)
    if set(reports) != {"quick", "full"}:
        raise SystemExit(f"need reports of both modes, got: {', '.join(reports) or 'none'}")
    quick, full = reports["quick"], reports["full"]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()

        def fill(m: re.Match[str]) -> str:
            skip = set(m.group(2).split(",")) if m.group(2) else set()
            head = m.group(0).split("\n", 1)[0]
            body = summary(quick, full) if m.group(1) == "summary" else block(m.group(1), skip, quick, full)
            return f"{head}\n{body}\n<!-- /reproduce -->"

        new = BLOCK.sub(fill, text)
        if new != text:
            page.write_text(new)
            print(f"rewrote {page.relative_to(ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
