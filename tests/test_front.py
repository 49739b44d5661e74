"""The front door: what `import dsim` loads, and the summary `dsim run` prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dsim
from dsim.stats import t_half_width

HEAVY = ("pandas", "pyarrow", "scipy", "matplotlib", "numpy", "rich")


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def dsim_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsim", *args], capture_output=True, text=True)


# -- what loads when ------------------------------------------------------------------------


def test_import_dsim_leaves_the_heavy_modules_out() -> None:
    p = python(f"import sys, dsim; print([m for m in {HEAVY!r} if m in sys.modules])")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_version_help_and_validate_leave_the_heavy_modules_out(three_hops_file: Path) -> None:
    for argv in (["--version"], ["--help"], ["validate", str(three_hops_file)]):
        code = (
            f"import sys\nfrom dsim.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])"
        )
        p = python(code)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip().splitlines()[-1] == "[]", argv


def test_lazy_names_are_the_functions_even_after_their_modules_load() -> None:
    # dsim.sweep and dsim.replay name functions; importing the modules of the same names
    # must not replace them.
    p = python("import dsim.sweep, dsim.replay, dsim; print(callable(dsim.sweep), callable(dsim.replay), dsim.run.__module__, dsim.stats.LEVEL)")
    assert p.stdout.split() == ["True", "True", "dsim.api", "0.9"], p.stderr
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dsim.nope  # noqa: B018


def test_python_m_dsim_is_the_command() -> None:
    p = dsim_cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"dsim {dsim.__version__}"


# -- what `dsim run` prints ------------------------------------------------------------------

THIRTY = """\
name = "thirty"
duration = "4s"
warmup = "1s"
[nodes]
hosts = ["A", "B"]
routers = ["R"]
[[link]]
from = "A"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "R"
to = "B"
rate = "3Mbps"
delay = "5ms"
queue = { type = "priority", classes = [ { dscp = ["EF"], queue = { type = "droptail", limit = "20p" } }, { default = true, queue = { type = "droptail", limit = "30p" } } ] }
[[flow]]
name = "slow"
count = 10
src = "A"
dst = "B"
dscp = "AF11"
app = { type = "cbr", rate = "50kbps", size = "500B" }
[[flow]]
name = "mid"
count = 10
src = "A"
dst = "B"
app = { type = "cbr", rate = "100kbps", size = "500B" }
[[flow]]
name = "voice"
count = 10
src = "A"
dst = "B"
dscp = "EF"
app = { type = "cbr", rate = "150kbps", size = "500B" }
"""


@pytest.fixture(scope="module")
def thirty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dsim.Results]:
    f = tmp_path_factory.mktemp("thirty") / "thirty.toml"
    f.write_text(THIRTY)
    return f, dsim.run(f, replications=2, jobs=1)


def flow_rows(stdout: str) -> list[str]:
    return [line.split("│")[1].strip() for line in stdout.splitlines() if line.startswith("│") and line.split("│")[1].strip()[:4] in ("slow", "mid.", "voic")]


def test_run_prints_the_top_and_bottom_flows_and_every_one_with_all(thirty: tuple[Path, dsim.Results], tmp_path: Path) -> None:
    f, res = thirty
    p = dsim_cli("run", str(f), "-r", "2", "--out", str(tmp_path / "a"))
    assert p.returncode == 0, p.stderr
    assert "the 10 with the highest throughput and the 5 with the lowest, of 30 (--all prints every one)" in p.stdout
    # The ten voice flows are the fastest, the slowest five are "slow" flows; flows that
    # tie keep their order.
    flows = res.summary("flows")
    top = flows.sort_values("throughput_bps", ascending=False, kind="stable").head(10)
    bottom = flows.drop(top.index).sort_values("throughput_bps", kind="stable").head(5)
    shown = flow_rows(p.stdout)
    assert shown == top["flow"].tolist() + bottom["flow"].tolist()
    assert {n.split(".")[0] for n in shown[:10]} == {"voice"} and {n.split(".")[0] for n in shown[10:]} == {"slow"}
    assert len(pd.read_parquet(tmp_path / "a" / "flows.parquet")) == 60, "the tables hold every row"
    p = dsim_cli("run", str(f), "-r", "2", "--out", str(tmp_path / "b"), "--all")
    assert p.returncode == 0, p.stderr
    assert len(flow_rows(p.stdout)) == 30


def test_run_prints_classes_and_the_bottleneck(thirty: tuple[Path, dsim.Results], tmp_path: Path) -> None:
    f, _ = thirty
    p = dsim_cli("run", str(f), "-r", "2", "--out", str(tmp_path / "a"))
    out = p.stdout
    # The estimate comes first (its numbers are checked by the guide's outputs), then the header.
    estimate, header = out.splitlines()[:2]
    assert estimate.startswith("thirty: one replication is about ") and estimate.endswith(" (estimated)")
    assert header == "thirty: 2 replications; each number is their mean ± the half width of its 90 % Student-t interval"
    assert "Classes: the flows of each DSCP the sources set" in out
    classes = [line.split("│")[1].strip() for line in out.split("Classes:")[1].split("Ports:")[0].splitlines() if line.startswith("│")]
    assert classes == ["AF11", "BE", "EF"]
    ports = out.split("Ports:")[1].split("Flows:")[0]
    assert ports.startswith(" every port with traffic, most drops first")
    first = next(line for line in ports.splitlines() if line.startswith("│"))
    assert first.split("│")[1].strip() == "R->B", "the port that queues most comes first"
    assert "Queues and precedences of these ports" in out, "the priority port's two queues"


def test_class_and_port_summaries_add_up_the_tables(thirty: tuple[Path, dsim.Results]) -> None:
    _, res = thirty
    c = res.classes().set_index("dscp")
    f = res.flows
    for dscp, g in f.groupby("dscp"):
        per_rep = g.groupby("replication")
        assert c.loc[dscp, "flows"] == 10
        assert c.loc[dscp, "throughput_bps"] == pytest.approx(per_rep["throughput_bps"].sum().mean(), rel=1e-12)
        weighted = per_rep.apply(lambda r: (r["delay_mean_ms"] * r["delivered_pkts"]).sum() / r["delivered_pkts"].sum())
        assert c.loc[dscp, "delay_mean_ms"] == pytest.approx(weighted.mean(), rel=1e-12)
        assert c.loc[dscp, "delay_p99_ms"] == pytest.approx(per_rep["delay_p99_ms"].max().mean(), rel=1e-12)
        loss = 100 * per_rep["dropped_pkts"].sum() / per_rep["sent_pkts"].sum()
        assert c.loc[dscp, "loss_pct"] == pytest.approx(loss.mean(), rel=1e-12, abs=1e-12)
        assert c.loc[dscp, "throughput_bps_ci"] == pytest.approx(t_half_width(per_rep["throughput_bps"].sum()), rel=1e-9, nan_ok=True)
    p = res.ports().set_index("port")
    q = res.queues[res.queues["port"] == "R->B"].groupby("replication")
    assert p.loc["R->B", "mean_len_pkts"] == pytest.approx(q["mean_len_pkts"].sum().mean(), rel=1e-12)
    assert p.loc["R->B", "arrivals_pkts"] == q["arrivals_pkts"].sum().mean()
    assert list(p.index) == ["R->B", "A->R"], "ports with traffic, bottleneck first"


def test_summary_json_has_no_nan(thirty: tuple[Path, dsim.Results]) -> None:
    _, res = thirty
    text = json.dumps(res.summary_json(), allow_nan=False, default=lambda v: v.item())
    assert json.loads(text)["flows"][0]["flow"] == "slow.0"


def test_a_single_run_shows_its_progress_on_a_terminal(three_hops_text: str) -> None:
    import io

    from rich.console import Console

    buf = io.StringIO()
    dsim.run(three_hops_text, replications=1, progress=True, console=Console(file=buf, force_terminal=True, width=150))
    last = buf.getvalue().rstrip().split("\r")[-1]
    assert "10.0 / 10.0 s simulated" in last and "events/s" in last and "ETA" in last, last


# -- reading TOML ---------------------------------------------------------------------------

ROOT = Path(__file__).parent.parent
#: The shipped scenarios, the golden set's and the documentation's examples.
SHIPPED = sorted(
    [
        *ROOT.glob("python/dsim/scenarios/**/*.toml"),
        *ROOT.glob("crates/dsim-core/tests/golden/*.toml"),
        *ROOT.glob("docs/examples/*.toml"),
    ]
)


def _typed(x: object) -> object:
    """A value with its types and key order made comparable (a dict's order counts)."""
    if isinstance(x, dict):
        return [(k, _typed(v)) for k, v in x.items()]
    if isinstance(x, list):
        return [_typed(v) for v in x]
    return (type(x).__name__, x)


def test_the_scenarios_to_compare_are_found() -> None:
    assert len(SHIPPED) >= 10, SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_core_reads_toml_as_tomllib_does(path: Path) -> None:
    import tomllib

    from dsim.scenario import load_toml

    text = path.read_text()
    assert _typed(load_toml(text)) == _typed(tomllib.loads(text))


def test_the_core_reads_every_toml_type_as_tomllib_does() -> None:
    import tomllib

    from dsim.scenario import load_toml, load_toml_copies

    text = (
        "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00.999999-07:00\n"
        "c = 1979-05-27T07:32:00.1234567\nd = 1979-05-27\ne = 07:32:00\nf = 00:32:00.5\n"
        'g = -inf\nh = 0x10\ni = [1, 2.5, "x", {y = true, z = []}]\nj.k.l = 3\n'
        "[[m]]\nn = 1\n[[m]]\n[o.p]\nq = 'r'\n[o]\ns = 1e3\n"
    )
    assert _typed(load_toml(text)) == _typed(tomllib.loads(text))
    one, two = load_toml_copies(text, 2)
    assert one == two and one is not two and one["i"] is not two["i"] and one["o"]["p"] is not two["o"]["p"]
