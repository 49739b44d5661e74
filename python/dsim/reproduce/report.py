"""The reproduction report: published beside simulated, with verdicts, on the console, in
Markdown (report.md, with figures) and in JSON (report.json, for tools)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import __version__
from ..stats import LEVEL
from .framework import PASS, Check, Outcome


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int,)) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        if v == 0:
            return "0"
        mag = abs(v)
        if mag >= 1000:
            return f"{v:,.0f}"
        if mag >= 10:
            return f"{v:.1f}"
        if mag >= 0.01:
            return f"{v:.3g}"
        return f"{v:.3g}"
    return str(v)


def _simulated(c: Check) -> str:
    text = _num(c.simulated)
    if c.ci:
        text += f" [{_num(c.ci[0])}, {_num(c.ci[1])}]"
    return text


def _published(c: Check) -> str:
    text = _num(c.published)
    if c.band:
        text += f" ({c.band})"
    return text


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    mode: str = "quick"

    def misses(self) -> list[tuple[Outcome, Check | None]]:
        out: list[tuple[Outcome, Check | None]] = []
        for o in self.outcomes:
            if o.error:
                out.append((o, None))
            out.extend((o, c) for c in o.misses())
        return out

    def counts(self) -> tuple[int, int, int]:
        checks = [c for o in self.outcomes for c in o.checks]
        passed = sum(c.verdict == PASS for c in checks)
        errors = sum(o.error is not None for o in self.outcomes)
        return passed, len(checks) - passed, errors

    # -- console -----------------------------------------------------------------------

    def print_outcome(self, con: Console, o: Outcome) -> None:
        e = o.experiment
        t = Table(title=f"[bold]{e.name}[/]: {e.title}\n[dim]{e.source} · {o.wall_s:.1f} s[/]", title_justify="left", expand=False)
        t.add_column("check")
        t.add_column("published / expected", justify="right")
        t.add_column(f"dsim (mean [{LEVEL:.0%} CI])", justify="right")
        t.add_column("unit")
        t.add_column("verdict")
        for c in o.checks:
            colour = "green" if c.verdict == PASS else "red"
            t.add_row(escape(c.text), escape(_published(c)), escape(_simulated(c)), escape(c.unit), f"[{colour}]{c.verdict}[/]")
        con.print(t)
        for title, df in o.tables:
            con.print(f"[bold]{escape(title)}[/]")
            con.print(df.to_string(index=False, float_format=lambda v: _num(float(v))), markup=False)
        if o.error:
            con.print(f"[bold red]error:[/] {escape(o.error)}")
        for c in o.misses():
            if c.note:
                con.print(f"[red]miss[/] {c.id}: {escape(c.note)}")

    def print_summary(self, con: Console) -> None:
        passed, missed, errors = self.counts()
        t = Table(title=f"Reproduction summary ({self.mode} mode)", title_justify="left")
        for col in ("experiment", "checks", "pass", "miss", "time s"):
            t.add_column(col, justify="left" if col == "experiment" else "right")
        for o in self.outcomes:
            n = len(o.checks)
            miss = len(o.misses()) + (1 if o.error else 0)
            t.add_row(o.experiment.name, str(n), str(n - len(o.misses())), f"[red]{miss}[/]" if miss else "0", f"{o.wall_s:.1f}")
        con.print(t)
        con.print(f"{passed} passed, {missed} missed, {errors} experiment error(s).")

    # -- files ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        passed, missed, errors = self.counts()
        return {
            "dsim_version": __version__,
            "mode": self.mode,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.platform(),
            "confidence_level": LEVEL,
            "totals": {"pass": passed, "miss": missed, "errors": errors},
            "experiments": [
                {
                    "name": o.experiment.name,
                    "title": o.experiment.title,
                    "source": o.experiment.source,
                    "families": list(o.experiment.families),
                    "wall_s": round(o.wall_s, 3),
                    "error": o.error,
                    "notes": o.notes,
                    "checks": [c.to_json() for c in o.checks],
                    "figures": [str(p.name) for _, p in o.figures],
                }
                for o in self.outcomes
            ],
        }

    def to_markdown(self, out: Path) -> str:
        passed, missed, errors = self.counts()
        lines = [
            f"# dsim reproduction report ({self.mode} mode)",
            "",
            f"dsim {__version__}, {_dt.date.today().isoformat()}, {platform.platform()}. "
            f"Simulated values are means over replications with {LEVEL:.0%} Student-t confidence intervals.",
            "",
            f"**{passed} checks pass, {missed} miss, {errors} experiment error(s).**",
            "",
        ]
        for o in self.outcomes:
            e = o.experiment
            lines += [f"## {e.name}: {e.title}", "", f"Source: {e.source}. Run time {o.wall_s:.1f} s.", ""]
            if e.doc:
                lines += [e.doc, ""]
            lines += ["| check | published / expected | dsim | unit | verdict |", "|---|---:|---:|---|---|"]
            for c in o.checks:
                verdict = "pass" if c.verdict == PASS else "**miss**"
                lines.append(f"| {c.text} | {_published(c)} | {_simulated(c)} | {c.unit} | {verdict} |")
            lines.append("")
            for c in o.checks:
                if c.note:
                    lines.append(f"- *{c.id}*: {c.note}")
            for note in o.notes:
                lines.append(f"- {note}" if "\n" not in note else f"```\n{note}\n```")
            if o.error:
                lines.append(f"- **error**: {o.error}")
            lines.append("")
            for title, df in o.tables:
                lines += [f"**{title}**", "", _markdown_table(df), ""]
            for name, path in o.figures:
                lines += [f"![{name}]({path.relative_to(out)})", ""]
        return "\n".join(lines)

    def write(self, out: Path) -> tuple[Path, Path]:
        out.mkdir(parents=True, exist_ok=True)
        md = out / "report.md"
        js = out / "report.json"
        md.write_text(self.to_markdown(out))
        js.write_text(json.dumps(self.to_json(), indent=2))
        return md, js


def _markdown_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    rows = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        rows.append("| " + " | ".join(_num(r[c]) if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")
    return "\n".join(rows)
