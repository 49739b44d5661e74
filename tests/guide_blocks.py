"""The runnable blocks of docs/guide.md: what the guide shows is what the commands print.

A ```console block holds `$ COMMAND` lines, each followed by what it prints; a ```python
block followed by a ```text block holds a program and what it prints. Commands run in a
scratch folder (so `results/...` in their output is relative to it) with docs/examples/
at hand; programs run from the repository's root. Output that depends on the machine
(wall times, thread counts) is cut where it starts and ends with "…"; a line "…" alone in
the guide stands for any number of lines left out.

    python tests/guide_blocks.py           # checks every block (what tests/test_guide.py does)
    python tests/guide_blocks.py --update  # rewrites the blocks that print something else now
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
ELLIPSIS = "…"

#: Output lines whose end depends on the machine: kept up to the match's end, then "…".
VARYING = [
    re.compile(r"^\d+ replication\(s\), [\d,]+ events in "),
    re.compile(r"^Sweep of .*? tasks "),
    re.compile(r"^\d+ tasks?: .*? failed; "),
]


def stable(line: str) -> str:
    """`line` cut where what follows depends on the machine."""
    line = line.rstrip()
    for pattern in VARYING:
        m = pattern.match(line)
        if m:
            return line[: m.end()] + ELLIPSIS
    return line


@dataclass
class Block:
    """A runnable block: its commands (console) or program (python), the lines the guide
    shows as their output, and where those lines are in the guide."""

    kind: str
    code: list[str]
    shown: list[str]
    start: int
    end: int


def blocks(text: str) -> list[Block]:
    """The runnable blocks of the guide's text, in order."""
    lines = text.split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i] == "```console":
            j = lines.index("```", i + 1)
            body = lines[i + 1 : j]
            commands = [k for k, line in enumerate(body) if line.startswith("$ ")]
            for n, k in enumerate(commands):
                stop = commands[n + 1] if n + 1 < len(commands) else len(body)
                found.append(Block("console", [body[k][2:]], body[k + 1 : stop], i + 1 + k + 1, i + 1 + stop))
            i = j + 1
        elif lines[i] == "```python" and "```text" in lines[lines.index("```", i + 1) + 1 : lines.index("```", i + 1) + 3]:
            j = lines.index("```", i + 1)
            t = lines.index("```text", j + 1)
            u = lines.index("```", t + 1)
            found.append(Block("python", lines[i + 1 : j], lines[t + 1 : u], t + 1, u))
            i = u + 1
        else:
            i += 1
    return found


def run(block: Block, scratch: Path) -> list[str]:
    """What the block's command or program prints, its machine-dependent ends cut."""
    env = dict(os.environ, COLUMNS="160")
    if block.kind == "console":
        argv = shlex.split(block.code[0])
        assert argv[0] == "dsim", f"a guide command runs dsim: {block.code[0]}"
        p = subprocess.run([sys.executable, "-m", "dsim", *argv[1:]], cwd=scratch, env=env, capture_output=True, text=True)
    else:
        p = subprocess.run([sys.executable, "-c", "\n".join(block.code)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert p.returncode == 0, f"{block.code}: exit {p.returncode}\n{p.stderr}"
    out = p.stdout.rstrip("\n").split("\n")
    return [stable(line) for line in out]


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` is what `shown` shows: line for line, a line "…" standing for any
    number of lines."""
    if not shown:
        return not printed
    if shown[0] == ELLIPSIS:
        return any(matches(shown[1:], printed[k:]) for k in range(len(printed) + 1))
    return bool(printed) and printed[0] == shown[0] and matches(shown[1:], printed[1:])


def scratch_folder() -> Path:
    """A scratch folder with docs/examples/ in it, where the guide's commands run."""
    d = Path(tempfile.mkdtemp(prefix="dsim-guide-"))
    shutil.copytree(ROOT / "docs" / "examples", d / "docs" / "examples")
    return d


def check() -> list[str]:
    """Every block whose output differs from what the guide shows, described."""
    scratch = scratch_folder()
    problems = []
    for b in blocks(GUIDE.read_text()):
        printed = run(b, scratch)
        if not matches(b.shown, printed):
            problems.append(f"docs/guide.md line {b.start}: {b.code[0]}\n--- shown\n" + "\n".join(b.shown) + "\n--- printed\n" + "\n".join(printed))
    return problems


def elided_like(shown: list[str], out: list[str]) -> list[str]:
    """`out` cut as `shown` is: each part of `shown` between "…" lines is found in `out` by
    its first line (a table's title) and runs to the end of as many tables ("└") as it
    shows, or to the
    end of the output for the last part (the output's last lines if its first line
    changed); a part not found keeps the whole output."""
    if ELLIPSIS not in shown:
        return out
    parts: list[list[str]] = [[]]
    for line in shown:
        if line == ELLIPSIS:
            parts.append([])
        else:
            parts[-1].append(line)
    result: list[str] = []
    pos = 0
    for k, part in enumerate(parts):
        if k > 0:
            result.append(ELLIPSIS)
        if not part:
            continue
        last = k == len(parts) - 1
        if k == 0:
            start = 0
        else:
            hits = [i for i in range(pos, len(out)) if stable(out[i]).strip() == part[0].strip()]
            if hits:
                start = hits[0]
            elif last and len(out) - len(part) >= pos:
                start = len(out) - len(part)  # the closing lines, whatever they say now
            else:
                return out
        if last:
            end = len(out)
        elif tables := sum(line.startswith("└") for line in part):
            # As many tables as the part shows, each ending in its bottom border.
            ends = [i + 1 for i in range(start, len(out)) if out[i].startswith("└")]
            end = ends[tables - 1] if len(ends) >= tables else len(out)
        else:
            end = start + len(part)
        result += out[start:end]
        pos = end
    return result


def update() -> None:
    """Rewrites the output of every block that no longer prints what the guide shows,
    keeping the block's elisions ([`elided_like`])."""
    scratch = scratch_folder()
    lines = GUIDE.read_text().split("\n")
    found = blocks("\n".join(lines))
    printed = [run(b, scratch) for b in found]  # in order: a plot needs its run first
    for b, out in reversed(list(zip(found, printed, strict=True))):
        if not matches(b.shown, out):
            lines[b.start : b.end] = elided_like(b.shown, out)
    GUIDE.write_text("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        failures = check()
        print("\n\n".join(failures) or "every block prints what the guide shows")
        sys.exit(1 if failures else 0)
