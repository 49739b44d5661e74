"""The reproduction report: every check with its verdict and reason, each published table
beside dsim's, the figures with the published points on them; on the console, as
report.md, report.json and one self-contained report.html (figures inline).

The headline counts reproductions only: "N of M published numbers and claims
reproduced"; invariants and set-up checks are counted apart."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .. import __version__
from ..stats import LEVEL
from .framework import (
    FULL_ONLY,
    INVARIANT,
    KINDS,
    MISS,
    PASS,
    REPRODUCTION,
    SETUP,
    Check,
    Measures,
    Outcome,
    Sample,
    Table,
    fmt,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from rich.console import Console


def _numeric(key: object) -> float | None:
    """The x position of a row or column key: a number, or the number a key such as
    "10ms" starts with; None for a label ("PQ", "flat")."""
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return float(key)
    m = re.match(r"^([0-9]+(?:\.[0-9]+)?)", str(key))
    return float(m.group(1)) if m else None


def published_beside_dsim(t: Table[Any, Any], m: Measures, outcome: Outcome) -> pd.DataFrame:
    """The table as published, each cell followed by dsim's mean ± 90 % half width and,
    where it misses its band, a cross."""
    import pandas as pd

    verdict = {c.id: c.verdict for c in outcome.checks}
    rows = []
    for r in t.rows:
        row: dict[str, object] = {t.row_label or "row": r}
        for c in t.columns:
            p = t.published(r, c)
            if p is None:
                continue
            row[f"{c} published"] = p.show()
            q = t.quantity(r, c)
            row[f"{c} dsim"] = (m[q].show() if q in m else "full mode") + (" ✗" if verdict.get(t.check_id(r, c)) == MISS else "")
        rows.append(row)
    return pd.DataFrame(rows)


def readable_log_axis(axis: Axis, ticks: Sequence[float]) -> None:
    """A log axis labelled with the values themselves (2, 4, 8, 24), not powers of ten."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt(float(v))))
    axis.set_minor_formatter(NullFormatter())


def figure_of_table(t: Table[Any, Any], m: Measures) -> Figure:
    """dsim (filled markers, 90 % CI bars) beside the published cells (open markers, their
    CI where given): x = the rows (one line per column) or the columns (one per row); keys
    that are labels, not numbers ("PQ", "flat BE"), are drawn as levels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    along, across = (t.rows, t.columns) if t.plot == "rows" else (t.columns, t.rows)

    def cell(k: Any, b: Any) -> tuple[Any, Any]:
        return (k, b) if t.plot == "rows" else (b, k)

    numbers = [_numeric(k) for k in along]
    categorical = all(x is None for x in numbers)
    xs = [float(i) for i in range(len(along))] if categorical else numbers
    fig, ax = plt.subplots(figsize=(6.4, 4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, b in enumerate(across):
        colour = colours[i % len(colours)]
        # (x, dsim, published) of the cells at a number; (key, dsim, published) of those at a
        # label. Cells whose set-up runs in full mode only are left out of a quick figure.
        pts: list[tuple[float, Sample, Sample]] = []
        levels: list[tuple[Any, Sample, Sample]] = []
        for x, k in zip(xs, along, strict=True):
            pub, q = t.published(*cell(k, b)), t.quantity(*cell(k, b))
            if pub is None or q not in m:
                continue
            if x is None:
                levels.append((k, m[q], pub))
            else:
                pts.append((x, m[q], pub))
        if pts:
            # Categories: no lines between them, each series a little apart.
            at = [x + (0.08 * (i - len(across) / 2) if categorical else 0.0) for x, _, _ in pts]
            ax.errorbar(at, [s.mean for _, s, _ in pts], yerr=[s.half for _, s, _ in pts], fmt="o" if categorical else "o-", color=colour, capsize=3, label=f"dsim, {b}")
            ax.errorbar(at, [p.mean for _, _, p in pts], yerr=[p.half for _, _, p in pts], fmt="s" if categorical else "s--", mfc="none", color=colour, alpha=0.8, capsize=3, label=f"published, {b}")
        for k, sim, pub in levels:
            ax.axhline(sim.mean, color=colour, ls=":", lw=1.2, label=f"dsim, {b}, {k}")
            ax.axhline(pub.mean, color=colour, ls="-.", lw=1, alpha=0.6, label=f"published, {b}, {k}")
    if categorical:
        ax.set_xticks(range(len(along)), [str(k) for k in along])
    elif t.logx:
        ax.set_xscale("log")
        readable_log_axis(ax.xaxis, sorted(x for x in xs if x is not None))
    ax.set_xlabel(t.row_label if t.plot == "rows" else "")
    ax.set_ylabel(t.ylabel or t.unit)
    ax.set_title(f"{t.title} ({t.source})", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


@dataclass
class Counts:
    passed: int = 0
    total: int = 0
    expected_misses: int = 0
    unexpected: int = 0
    full_only: int = 0

    def add(self, c: Check) -> None:
        if not c.counted:
            self.full_only += 1
            return
        self.total += 1
        self.passed += c.verdict == PASS
        self.expected_misses += c.verdict == MISS and c.expected == MISS
        self.unexpected += c.unexpected

    def text(self) -> str:
        return f"{self.passed} / {self.total}"


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    mode: str = "quick"
    #: Wall time of each family's batch of runs, seconds.
    wall_s: dict[str, float] = field(default_factory=dict)

    def families(self) -> list[str]:
        return list(dict.fromkeys(o.experiment.family for o in self.outcomes))

    def counts(self, kind: str, family: str | None = None) -> Counts:
        out = Counts()
        for o in self.outcomes:
            if family is None or o.experiment.family == family:
                for c in o.checks:
                    if c.kind == kind:
                        out.add(c)
        return out

    def errors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error]

    def unexpected(self) -> list[tuple[Outcome, Check]]:
        return [(o, c) for o in self.outcomes for c in o.unexpected()]

    def misses(self) -> list[tuple[Outcome, Check]]:
        return [(o, c) for o in self.outcomes for c in o.misses()]

    def headline(self, family: str | None = None) -> str:
        r = self.counts(REPRODUCTION, family)
        return f"{r.passed} of {r.total} published numbers and claims reproduced"

    def split(self, family: str | None = None) -> str:
        r, i, s = (self.counts(k, family) for k in KINDS)
        text = f"{self.headline(family)} ({r.expected_misses} expected misses); invariants {i.text()}; set-up checks {s.text()}"
        bad = r.unexpected + i.unexpected + s.unexpected
        if bad:
            text += f"; {bad} UNEXPECTED verdict(s)"
        return text

    # -- console -----------------------------------------------------------------------

    def print_outcome(self, con: Console, o: Outcome) -> None:
        from rich.markup import escape
        from rich.table import Table as RichTable

        e = o.experiment
        t = RichTable(title=f"[bold]{e.name}[/]: {escape(e.title)}\n[dim]{escape(e.source)}[/]", title_justify="left")
        for col in ("check", "kind", "published", f"dsim (mean ± {LEVEL:.0%} CI)", "verdict"):
            t.add_column(col, justify="right" if col == "published" else "left")
        for c in o.checks:
            colour = "green" if c.verdict == PASS else ("yellow" if c.verdict == FULL_ONLY else "red")
            tag = c.verdict + (" (expected)" if c.verdict == MISS and not c.unexpected else "") + (" UNEXPECTED" if c.unexpected else "")
            t.add_row(escape(c.text), c.kind, escape(c.published), escape(c.simulated + (f" {c.unit}" if c.unit else "")), f"[{colour}]{tag}[/]")
        con.print(t)
        if o.error:
            con.print(f"[bold red]error:[/] {escape(o.error)}")
        for c in o.checks:
            if c.reason and c.verdict != PASS:
                con.print(f"[dim]{c.id} ({escape(c.miss_class or c.verdict)}): {escape(c.reason)}[/]")

    def print_summary(self, con: Console) -> None:
        from rich.table import Table as RichTable

        t = RichTable(title=f"Reproduction summary ({self.mode} mode): checks passed / checks", title_justify="left")
        for col in ("family", "reproductions", "expected misses", "invariants", "set-up checks", "unexpected", "runs s"):
            t.add_column(col, justify="left" if col == "family" else "right")
        for f in self.families():
            r, i, s = (self.counts(k, f) for k in KINDS)
            bad = r.unexpected + i.unexpected + s.unexpected + sum(o.experiment.family == f for o in self.errors())
            t.add_row(f, r.text(), str(r.expected_misses), i.text(), s.text(), f"[red]{bad}[/]" if bad else "0", f"{self.wall_s.get(f, 0):.1f}")
        con.print(t)
        con.print(f"[bold]{self.split()}[/]; {len(self.errors())} experiment error(s).")

    # -- files ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        def counts(kind: str, family: str | None = None) -> dict[str, int]:
            c = self.counts(kind, family)
            return {"passed": c.passed, "checks": c.total, "expected_misses": c.expected_misses, "unexpected": c.unexpected, "full_only": c.full_only}

        return {
            "dsim_version": __version__,
            "mode": self.mode,
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "machine": platform.platform(),
            "confidence_level": LEVEL,
            "headline": self.headline(),
            "totals": {k: counts(k) for k in KINDS} | {"errors": len(self.errors())},
            "families": {f: {k: counts(k, f) for k in KINDS} | {"wall_s": round(self.wall_s.get(f, 0.0), 2)} for f in self.families()},
            "experiments": [
                {
                    "name": o.experiment.name, "title": o.experiment.title, "source": o.experiment.source, "family": o.experiment.family,
                    "error": o.error, "notes": o.notes, "checks": [c.to_json() for c in o.checks], "figures": [p.name for _, p in o.figures],
                }
                for o in self.outcomes
            ],
        }

    def _family_rows(self) -> list[list[str]]:
        rows = []
        for f in self.families():
            r, i, s = (self.counts(k, f) for k in KINDS)
            rows.append([f, r.text(), str(r.expected_misses), i.text(), s.text(), str(r.unexpected + i.unexpected + s.unexpected)])
        return rows

    FAMILY_HEAD: ClassVar[list[str]] = ["family", "reproductions", "expected misses", "invariants", "set-up checks", "unexpected"]
    CHECK_HEAD: ClassVar[list[str]] = ["check", "kind", "source", "published", "dsim", "band / rule", "verdict"]

    @staticmethod
    def _check_row(c: Check) -> list[str]:
        verdict = c.verdict if not c.unexpected else f"{c.verdict} (UNEXPECTED)"
        return [c.text, c.kind, c.source, c.published, c.simulated + (f" {c.unit}" if c.unit else ""), c.rule, verdict]

    def to_markdown(self, out: Path) -> str:
        lines = [
            f"# dsim reproduction report ({self.mode} mode)", "",
            (f"dsim {__version__}, {_dt.date.today().isoformat()}, {platform.platform()}. Simulated values are means over "
             f"replications ± the half width of their {LEVEL:.0%} Student-t confidence interval."), "",
            f"**{self.split()}.**", "", _md([self.FAMILY_HEAD, *self._family_rows()]), "",
        ]  # fmt: skip
        for o in self.outcomes:
            e = o.experiment
            lines += [f"## {e.name}: {e.title}", "", f"{e.source}.", ""] + ([e.doc, ""] if e.doc else [])
            if o.error:
                lines += [f"**error**: {o.error}", ""]
            lines += [_md([self.CHECK_HEAD] + [self._check_row(c) for c in o.checks]), ""]
            lines += [f"- *{c.id}* ({c.miss_class or c.verdict}): {c.reason}" for c in o.checks if c.reason and c.verdict != PASS]
            lines += [f"- {n}" for n in o.notes] + [""]
            for title, df in o.tables:
                lines += [f"**{title}**", "", _md([list(map(str, df.columns))] + [[_cell(v) for v in row] for row in df.itertuples(index=False)]), ""]
            lines += [f"![{name}]({path.relative_to(out)})\n" for name, path in o.figures]
        return "\n".join(lines)

    def to_html(self) -> str:
        def table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
            body = "".join(f"<tr class='{classes[i] if classes else ''}'>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for i, row in enumerate(rows))
            return "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + f"</tr>{body}</table>"

        parts = [
            f"<h1>dsim reproduction report ({self.mode} mode)</h1>",
            (f"<p>dsim {html.escape(__version__)}, {_dt.date.today().isoformat()}, {html.escape(platform.platform())}. "
             f"Simulated values: mean ± half width of the {LEVEL:.0%} Student-t confidence interval over replications.</p>"),
            f"<p class='headline'>{html.escape(self.split())}</p>",
            table(self.FAMILY_HEAD, self._family_rows()),
        ]  # fmt: skip
        for o in self.outcomes:
            e = o.experiment
            parts += [f"<h2 id='{html.escape(e.name)}'>{html.escape(e.name)}: {html.escape(e.title)}</h2>", f"<p><i>{html.escape(e.source)}</i></p>"]
            if e.doc:
                parts.append(f"<p>{html.escape(e.doc)}</p>")
            if o.error:
                parts.append(f"<p class='miss'>error: {html.escape(o.error)}</p>")
            css = ["unexpected" if c.unexpected else ("pass" if c.verdict == PASS else ("expected" if c.verdict == MISS else "fullonly")) for c in o.checks]
            parts.append(table(self.CHECK_HEAD, [self._check_row(c) for c in o.checks], css))
            items = [f"<li><b>{html.escape(c.id)}</b> ({html.escape(c.miss_class or c.verdict)}): {html.escape(c.reason)}</li>" for c in o.checks if c.reason and c.verdict != PASS]
            items += [f"<li>{html.escape(n)}</li>" for n in o.notes]
            if items:
                parts.append("<ul>" + "".join(items) + "</ul>")
            for title, df in o.tables:
                parts += [f"<h3>{html.escape(title)}</h3>", table(list(map(str, df.columns)), [[_cell(v) for v in row] for row in df.itertuples(index=False)])]
            for name, path in o.figures:
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'><figcaption>{html.escape(name)}</figcaption></figure>")
        style = (
            "body{font-family:sans-serif;max-width:1200px;margin:auto;font-size:14px}table{border-collapse:collapse;margin:8px 0}"
            "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}th{background:#eee}.pass td:last-child{color:#070}"
            ".expected td:last-child{color:#a50}.unexpected{background:#fcc}.fullonly td:last-child{color:#777}"
            ".headline{font-size:1.2em;font-weight:bold}img{max-width:100%}"
        )
        return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dsim reproduction report</title><style>{style}</style></head><body>{''.join(parts)}</body></html>"

    def write(self, out: Path) -> tuple[Path, Path, Path]:
        out.mkdir(parents=True, exist_ok=True)
        paths = (out / "report.md", out / "report.json", out / "report.html")
        paths[0].write_text(self.to_markdown(out))
        paths[1].write_text(json.dumps(self.to_json(), indent=2))
        paths[2].write_text(self.to_html())
        return paths


def _cell(v: object) -> str:
    if isinstance(v, float) and not math.isnan(v):
        return fmt(v)
    return "" if isinstance(v, float) else str(v)


def _md(rows: list[list[str]]) -> str:
    def esc(v: str) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    head, *body = rows
    return "\n".join(["| " + " | ".join(map(esc, head)) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(map(esc, r)) + " |" for r in body])


__all__ = ["INVARIANT", "SETUP", "Counts", "Report", "Sample", "figure_of_table", "published_beside_dsim", "readable_log_axis"]
