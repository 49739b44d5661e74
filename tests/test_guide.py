"""The user guide cannot rot: every command and program in docs/guide.md prints what the
guide shows (at the examples' own settings), every example in docs/examples/ runs (short)
and draws its figures, and every figure the guide shows is there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dsim
from dsim.plot import write_figures, write_sweep_figure
from guide_blocks import GUIDE, ROOT, blocks, check

EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.toml"))
#: Simulated time of the short runs: 4 s, or enough for an example's last flow to start.
SHORT = {"tcp-dumbbell": "25s"}


def test_the_guide_prints_what_it_shows() -> None:
    assert len(blocks(GUIDE.read_text())) >= 15
    problems = check()
    assert not problems, "\n\n".join(problems) + "\n\n(python tests/guide_blocks.py --update rewrites them)"


def test_every_figure_the_guide_and_readme_show_is_there() -> None:
    for page in (GUIDE, ROOT / "README.md"):
        shown = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text())
        assert shown, page
        for f in shown:
            assert (page.parent / f).stat().st_size > 10_000, f"{page.name}: {f}"


def test_every_example_validates() -> None:
    p = subprocess.run([sys.executable, "-m", "dsim", "validate", *map(str, EXAMPLES)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ok: ") == len(EXAMPLES) >= 7


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_runs_and_draws(example: Path, tmp_path: Path) -> None:
    # Short: a few seconds of simulated time, one replication (two for a sweep's points).
    sc = dsim.Scenario.from_toml(example).set("duration", SHORT.get(example.stem, "4s")).set("warmup", "1s")
    if "sweep" in sc.data:
        sw = dsim.sweep(sc, replications=2, out=tmp_path / "sweep")
        assert sw.complete
        assert [p.name for p in write_sweep_figure(sw, tmp_path / "figures")] == ["sweep.png"]
    else:
        res = dsim.run(sc, replications=1, record=sc.data.get("record", True), capture_dir=tmp_path)
        assert res.flows["delivered_pkts"].sum() > 0
        kinds = res.plot.available()
        assert {"throughput", "delay"} <= set(kinds)
        written = write_figures(dsim.Results.load(res.save(tmp_path / "out")), None, tmp_path / "figures")
        assert [p.stem for p in written] == kinds
    assert all(p.stat().st_size > 5_000 for p in (tmp_path / "figures").iterdir())
