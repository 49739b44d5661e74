"""Sweeps: axes, executors (bit-identical tables), the resumable store, failures, progress."""

from __future__ import annotations

import io
import itertools
import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

import dsim
from dsim import _dsim
from dsim.axes import Design, parse_axes, parse_cli_axis
from dsim.executors import Local, Sequential
from dsim.store import StoreMismatch, read_task
from dsim.sweep import run_sweep

TINY = textwrap.dedent(
    """\
    name = "tiny"
    duration = "2s"
    warmup = "200ms"
    replications = 2

    [nodes]
    hosts = ["A", "B"]
    routers = ["R"]

    [[link]]
    from = "A"
    to = "R"
    rate = "10Mbps"
    delay = "1ms"

    [[link]]
    from = "R"
    to = "B"
    rate = "2Mbps"
    delay = "5ms"
    queue = { type = "droptail", limit = "20p" }

    [[flow]]
    name = "x"
    src = "A"
    dst = "B"
    app = { type = "poisson", rate = "1Mbps", size = "500B" }

    [[flow]]
    name = "y"
    src = "A"
    dst = "B"
    app = { type = "cbr", rate = "500kbps", size = "200B", spacing_variation = "10%" }
    """
)

THREE_AXES = {
    "flow[0].app.rate": ["1Mbps", "2.5Mbps"],
    "link[1].queue.limit": {"range": [10, 30, 20], "unit": "p"},
    "link[0].delay": ["1ms", "4ms"],
}


def tiny(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY + extra)
    return p


def dsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsim.cli", *args], capture_output=True, text=True, cwd=cwd)


def same_tables(a: dsim.SweepResults, b: dsim.SweepResults) -> None:
    assert set(a.tables) == set(b.tables) >= {"flows", "queues", "drops", "run"}
    for name in a.tables:
        x, y = a.tables[name], b.tables[name]
        if name == "run":  # wall time is the one machine-dependent column
            x, y = x.drop(columns="wall_s"), y.drop(columns="wall_s")
        pd.testing.assert_frame_equal(x, y, check_exact=True)


# -- axes ------------------------------------------------------------------------------------


def test_axes_lists_ranges_and_modes() -> None:
    axes, mode = parse_axes(
        {
            "mode": "zip",
            "flow[0].app.rate": ["1Mbps", "2Mbps", "4Mbps"],
            "link[1].queue.limit": {"range": [10, 50, 20], "unit": "p"},
            "link[0].loss": {"range": [0.1, 0.3, 0.1]},
        }
    )
    assert mode == "zip"
    assert [a.values for a in axes] == [("1Mbps", "2Mbps", "4Mbps"), ("10p", "30p", "50p"), (0.1, 0.2, 0.3)]
    zipped = Design(axes, "zip").check().points()
    assert [p.values["link[1].queue.limit"] for p in zipped] == ["10p", "30p", "50p"]
    cart = Design(axes[:2]).points()
    # The first axis varies slowest.
    assert [(p.index, p.values["flow[0].app.rate"], p.values["link[1].queue.limit"]) for p in cart[:4]] == [
        (0, "1Mbps", "10p"), (1, "1Mbps", "30p"), (2, "1Mbps", "50p"), (3, "2Mbps", "10p")
    ]
    assert len(cart) == 9
    # Decimal steps: 1.5 + 2 x 0.5 lands on the stop exactly.
    assert parse_cli_axis("flow[0].app.rate=0.5:1.5:0.5Mbps").values == ("0.5Mbps", "1Mbps", "1.5Mbps")
    assert parse_cli_axis("link[1].queue.limit=10:40:10p").values == ("10p", "20p", "30p", "40p")
    assert parse_cli_axis("flow[0].count=1,2,4").values == (1, 2, 4)
    assert parse_cli_axis('link[1].queue={type = "droptail", limit = "5p"},{type = "droptail", limit = "9p"}').values == (
        {"type": "droptail", "limit": "5p"},
        {"type": "droptail", "limit": "9p"},
    )


@pytest.mark.parametrize(
    "axes, mode, key, value",
    [
        ({"flow[0].app.rat": ["1Mbps"]}, None, "flow[0].app.rat", '"1Mbps"'),
        ({"flow[7].app.rate": ["1Mbps"]}, None, "flow[7].app.rate", '"1Mbps"'),
        ({"link[1].queue.limit": []}, None, "link[1].queue.limit", "[]"),
        ({"link[1].queue.limit": {"range": [10, 50, 0], "unit": "p"}}, None, "link[1].queue.limit", "range"),
        ({"link[1].queue.limit": {"range": [50, 10, 10], "unit": "p"}}, None, "link[1].queue.limit", "range"),
        ({"link[1].queue.limit": {"range": ["a", 10, 1]}}, None, "link[1].queue.limit", "range"),
        ({"link[1].queue.limit": {"rnage": [1, 10, 1]}}, None, "link[1].queue.limit.rnage", "[1, 10, 1]"),
        ({"duration": "5s"}, None, "duration", '"5s"'),
        ({"flow[0].app.rate": ["1Mbps", "2Mbps"], "duration": ["1s"]}, "zip", "flow[0].app.rate has 2", "duration has 1"),
        ({"duration": ["1s"]}, "diagonal", "mode", "diagonal"),
        ({"link[1].queue.limit": ["5p"], "link[1].queue": [{"type": "droptail", "limit": "9p"}]}, None, "lies inside axis 'link[1].queue'", "link[1].queue.limit"),
    ],
)
def test_a_bad_axis_is_refused_before_anything_runs(tmp_path: Path, axes, mode, key, value) -> None:
    out = tmp_path / "store"
    with pytest.raises(dsim.ScenarioError) as e:
        dsim.sweep(tiny(tmp_path), axes, mode=mode, out=out)
    assert key in str(e.value) and value in str(e.value), str(e.value)
    assert not out.exists()


def test_a_bad_axis_in_a_file_names_its_line(tmp_path: Path) -> None:
    f = tiny(tmp_path, '\n[sweep]\n"flow[0].app.rate" = ["1Mbps"]\n"link[1].queue.limit" = { range = [1, 5, 0], unit = "p" }\n')
    p = dsim_cli("sweep", str(f), "--out", str(tmp_path / "s"))
    assert p.returncode == 2, p.stdout + p.stderr
    line = TINY.count("\n") + 4
    assert f"line {line}: sweep axis 'link[1].queue.limit'" in p.stderr and "Traceback" not in p.stderr


# -- executors: the same tables, bit for bit -----------------------------------------------


def test_three_axis_sweep_is_the_same_on_every_executor(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    f = tiny(tmp_path)
    seq = dsim.sweep(f, THREE_AXES, replications=2, seed=7, out=tmp_path / "seq", executor=Sequential())
    loc = dsim.sweep(f, THREE_AXES, replications=2, seed=7, out=tmp_path / "loc", executor=Local(3))
    assert seq.complete and len(seq.points) == 8 and len(seq.run) == 16
    # Each task runs with derive_seed(base, [point, replication]), whatever runs it.
    run = seq.run
    assert list(run["seed"]) == [_dsim.derive_seed(7, [p, r]) for p in range(8) for r in range(2)]
    assert list(seq.flows.columns[:5]) == ["point", "flow[0].app.rate", "link[1].queue.limit", "link[0].delay", "replication"]
    assert list(seq.points["link[1].queue.limit"]) == ["10p", "10p", "30p", "30p"] * 2
    same_tables(seq, loc)
    # The axes change the numbers: the points are not copies of one another.
    thr = seq.summary("flows").set_index(["point", "flow"])["throughput_bps"]
    assert thr.loc[(4, "x")] > 1.5 * thr.loc[(0, "x")]

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            dask = dsim.sweep(f, THREE_AXES, replications=2, seed=7, out=tmp_path / "dask", executor=client)
        same_tables(seq, dask)
        # The command line joins the same scheduler over loopback.
        axes = ["--set", "flow[0].app.rate=1Mbps,2.5Mbps", "--set", "link[1].queue.limit=10:30:20p", "--set", "link[0].delay=1ms,4ms"]
        p = dsim_cli("sweep", str(f), *axes, "-r", "2", "--seed", "7", "--out", str(tmp_path / "cli"), "--dask", cluster.scheduler_address)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "Dask at tcp://127.0.0.1" in p.stdout and "16 tasks: 16 done" in p.stdout
    same_tables(seq, dsim.load(tmp_path / "cli"))


def test_run_is_the_same_on_every_executor(tmp_path: Path) -> None:
    f = tiny(tmp_path)
    a = dsim.run(f, seed=3, replications=3, executor="sequential")
    b = dsim.run(f, seed=3, replications=3, jobs=3)
    for name in ("flows", "queues", "drops"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert list(a.run["seed"]) == [dsim.replication_seed(3, r) for r in range(3)] == [dsim.derive_seed(3, [r]) for r in range(3)]


# -- the store -------------------------------------------------------------------------------


def test_load_merges_the_store_with_axis_columns_and_summaries(tmp_path: Path) -> None:
    res = dsim.sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "1.5Mbps"]}, replications=3, out=tmp_path / "s")
    back = dsim.load(tmp_path / "s")
    same_tables(res, back)
    m = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert m["scenario"]["hash"] == dsim.Scenario.from_toml(tiny(tmp_path)).hash()
    assert m["axes"] == [{"key": "flow[0].app.rate", "values": ["1Mbps", "1.5Mbps"]}]
    assert [t["state"] for t in m["tasks"]] == ["done"] * 6 and m["dsim_version"] == dsim.__version__
    assert "derive_seed(base_seed, [p, r])" in m["seed_formula"]
    s = back.summary("flows").set_index(["point", "flow"])
    x = back.flows[(back.flows["point"] == 1) & (back.flows["flow"] == "x")]["delay_mean_ms"]
    assert s.loc[(1, "x"), "n"] == 3
    assert s.loc[(1, "x"), "delay_mean_ms"] == pytest.approx(x.mean(), rel=1e-12)
    assert s.loc[(1, "x"), "delay_mean_ms_ci"] == pytest.approx(dsim.stats.t_half_width(x), rel=1e-12)
    assert s.loc[(1, "x"), "flow[0].app.rate"] == "1.5Mbps"


def test_corrupt_partial_and_foreign_files_are_redone(tmp_path: Path) -> None:
    f, out = tiny(tmp_path), tmp_path / "s"
    axes = {"flow[0].app.rate": ["1Mbps", "2Mbps"]}
    first = dsim.sweep(f, axes, out=out)
    tasks = out / "tasks"
    # A bit flip in the middle of one file, half of another, a third replaced by the file of
    # another task, and a temporary file left by a killed writer.
    corrupt = tasks / "p00000-r001.parquet"
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 3] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    partial = tasks / "p00001-r000.parquet"
    partial.write_bytes(partial.read_bytes()[: partial.stat().st_size // 2])
    foreign = tasks / "p00001-r001.parquet"
    foreign.write_bytes((tasks / "p00000-r000.parquet").read_bytes())
    (tasks / ".p00000-r000.parquet.999.tmp").write_bytes(b"half")
    for bad, why in ((corrupt, "^unreadable"), (partial, "^unreadable"), (foreign, "^belongs to another task")):
        with pytest.raises(ValueError, match=why):
            read_task(bad, {"point": int(bad.name[1:6]), "replication": int(bad.name[8:11])})
    damaged = dsim.load(out)  # the three tasks are left out, and count as not done
    assert not damaged.complete and list(damaged.points["done"]) == [1, 0] and list(damaged.points["pending"]) == [1, 2]
    assert len(damaged.flows) == len(first.flows) // 4
    report = run_sweep(f, axes, out=out)
    assert sorted((p, r) for p, r, _ in report.redone) == [(0, 1), (1, 0), (1, 1)]
    assert report.ran == 3 and report.reused == 1
    assert not list(tasks.glob("*.tmp"))
    same_tables(first, dsim.load(out))


def test_a_changed_scenario_is_refused_unless_new(tmp_path: Path) -> None:
    out = tmp_path / "s"
    dsim.sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out=out)
    with pytest.raises(StoreMismatch, match="axes"):
        dsim.sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "3Mbps"]}, out=out)
    f = tmp_path / "changed.toml"
    f.write_text(TINY.replace('duration = "2s"', 'duration = "3s"'))
    with pytest.raises(StoreMismatch, match="scenario hash"):
        dsim.sweep(f, {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out=out)
    p = dsim_cli("sweep", str(f), "--set", "flow[0].app.rate=1Mbps,2Mbps", "--out", str(out))
    assert p.returncode == 2 and "holds another sweep" in p.stderr and "--new" in p.stderr
    p = dsim_cli("sweep", str(f), "--set", "flow[0].app.rate=1Mbps,2Mbps", "--out", str(out), "--new")
    assert p.returncode == 0, p.stderr
    assert "4 tasks: 4 done (4 now, 0 from the store)" in p.stdout
    assert dsim.load(out).run["sim_time_s"].eq(3.0).all()


def test_more_replications_extend_the_store(tmp_path: Path) -> None:
    f, out = tiny(tmp_path), tmp_path / "s"
    dsim.sweep(f, {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, replications=2, out=out)
    report = run_sweep(f, {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, replications=3, out=out)
    assert (report.reused, report.ran) == (4, 2)
    with pytest.raises(StoreMismatch, match="3 replications per point, 2 asked"):
        run_sweep(f, {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, replications=2, out=out)


# -- failures ----------------------------------------------------------------------------------


def test_a_point_the_validator_refuses_fails_alone(tmp_path: Path) -> None:
    f, out = tiny(tmp_path), tmp_path / "s"
    p = dsim_cli("sweep", str(f), "--set", "flow[0].app.rate=1Mbps,fast,2Mbps", "--out", str(out))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "2 task(s) failed" in p.stdout and '"fast" does not start with a number' in p.stdout
    assert "6 tasks: 4 done (4 now, 0 from the store), 2 failed" in p.stdout
    res = dsim.load(out)
    assert list(res.failures["point"]) == [1, 1] and list(res.failures["replication"]) == [0, 1]
    assert res.failures["error"].str.contains('flow\\[0\\].app.rate = "fast"').all()
    assert list(res.points["done"]) == [2, 0, 2] and sorted(res.flows["point"].unique()) == [0, 2]
    m = json.loads((out / "manifest.json").read_text())
    assert [t["state"] for t in m["tasks"]] == ["done", "done", "failed", "failed", "done", "done"]
    assert "does not start with a number" in m["points"][1]["refused"]


def test_a_sweep_whose_every_point_is_refused_reports_it(tmp_path: Path) -> None:
    f, out = tiny(tmp_path), tmp_path / "s"
    p = dsim_cli("sweep", str(f), "--set", "flow[0].app.rate=fast,slow", "--out", str(out))
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert "4 tasks: 0 done (0 now, 0 from the store), 4 failed" in p.stdout
    res = dsim.load(out)
    assert list(res.points["failed"]) == [2, 2] and res.tables == {}
    with pytest.raises(dsim.DsimError, match="table 'flows': no finished task of this sweep has it \\(4 task\\(s\\) failed"):
        res.summary("flows")


def test_a_task_that_fails_while_running_is_recorded_and_the_others_go_on(tmp_path: Path, monkeypatch) -> None:
    real = _dsim.run_task

    def flaky(toml, base_seed, coords, progress=None, capture_dir=None):
        if list(coords) == [1, 0]:
            raise dsim.SimulationError("internal error while running tiny: boom (please report it)")
        return real(toml, base_seed, coords, progress, capture_dir)

    monkeypatch.setattr(_dsim, "run_task", flaky)
    report = run_sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out=tmp_path / "s", executor=Local(2))
    assert [(t["point"], t["replication"]) for t in report.failed] == [(1, 0)]
    assert report.failed[0]["error"] == "SimulationError: internal error while running tiny: boom (please report it)"
    assert report.ran == 3
    monkeypatch.setattr(_dsim, "run_task", real)
    again = run_sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "2Mbps"]}, out=tmp_path / "s")
    assert (again.ran, again.reused, again.failed) == (1, 3, [])


def test_run_refuses_a_scenario_with_sweep_axes(tmp_path: Path) -> None:
    f = tiny(tmp_path, '\n[sweep]\n"flow[0].app.rate" = ["1Mbps", "2Mbps"]\n')
    with pytest.raises(dsim.ScenarioError, match="dsim sweep"):
        dsim.run(f)
    p = dsim_cli("validate", str(f))
    assert p.returncode == 0 and "sweep of 2 point(s) over 1 axis (cartesian)" in p.stdout
    bad = tiny(tmp_path, '\n[sweep]\n"flow[0].app.rate" = ["1Mbps", "0bps"]\n')
    p = dsim_cli("validate", str(bad))
    assert p.returncode == 2 and "sweep point 1" in p.stderr


# -- interruption ------------------------------------------------------------------------------

SLOW = TINY.replace('duration = "2s"', 'duration = "200s"').replace('rate = "1Mbps", size = "500B"', 'rate = "1.9Mbps", size = "100B"')


def _start(tmp_path: Path, out: Path) -> subprocess.Popen[str]:
    f = tmp_path / "slow.toml"
    f.write_text(SLOW)
    return subprocess.Popen(
        [sys.executable, "-m", "dsim.cli", "sweep", str(f), "--set", "link[1].queue.limit=5:40:5p", "-r", "2", "--jobs", "2", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_for_files(out: Path, n: int, proc: subprocess.Popen[str]) -> list[Path]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        files = sorted((out / "tasks").glob("*.parquet")) if (out / "tasks").exists() else []
        if len(files) >= n:
            return files
        if proc.poll() is not None:
            raise AssertionError(proc.communicate())
        time.sleep(0.02)
    raise AssertionError("no task finished in time")


def _resume_and_check(tmp_path: Path, out: Path, kept: dict[str, tuple[int, int]]) -> None:
    p = dsim_cli("sweep", str(tmp_path / "slow.toml"), "--set", "link[1].queue.limit=5:40:5p", "-r", "2", "--jobs", "2", "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    res = dsim.load(out)
    # Every task exactly once.
    assert res.complete
    assert sorted(zip(res.run["point"], res.run["replication"], strict=True)) == [(pt, r) for pt in range(8) for r in range(2)]
    assert len(list((out / "tasks").glob("*.parquet"))) == 16 and not list((out / "tasks").glob("*.tmp"))
    # The tasks finished before the interruption were kept, not run again.
    for name, (ino, mtime) in kept.items():
        st = (out / "tasks" / name).stat()
        assert (st.st_ino, st.st_mtime_ns) == (ino, mtime), name
    assert f"{len(kept)} task(s) already done" in p.stdout or len(kept) == 0


def _snapshot(files: list[Path]) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in files}


def test_a_killed_sweep_resumes_with_every_task_once(tmp_path: Path) -> None:
    out = tmp_path / "s"
    proc = _start(tmp_path, out)
    _wait_for_files(out, 2, proc)
    proc.kill()
    proc.communicate()
    kept = _snapshot(sorted((out / "tasks").glob("*.parquet")))
    assert 2 <= len(kept) < 16, "the sweep must be killed part-way"
    _resume_and_check(tmp_path, out, kept)


def test_ctrl_c_stops_cleanly_and_keeps_finished_tasks(tmp_path: Path) -> None:
    out = tmp_path / "s"
    proc = _start(tmp_path, out)
    _wait_for_files(out, 2, proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    stopped_in = time.monotonic() - t0
    assert proc.returncode == 130, stdout + stderr
    assert "interrupted:" in stderr and "run the same command again to resume" in stderr and "Traceback" not in stderr
    m = json.loads((out / "manifest.json").read_text())
    done = [t for t in m["tasks"] if t["state"] == "done"]
    files = sorted((out / "tasks").glob("*.parquet"))
    # The manifest, saved on the way out, lists exactly the finished files.
    assert sorted(t["file"].split("/")[1] for t in done) == [f.name for f in files]
    assert 2 <= len(done) < 16
    assert stopped_in < 30
    _resume_and_check(tmp_path, out, _snapshot(files))


# -- progress ----------------------------------------------------------------------------------


def test_the_progress_hook_sees_the_run_advance_without_changing_it(tmp_path: Path) -> None:
    toml = TINY
    calls: list[tuple[float, float, int]] = []
    with_hook = _dsim.run_task(toml, 5, [1, 0], lambda now, end, ev: calls.append((now, end, ev)))
    plain = _dsim.run_task(toml, 5, [1, 0])
    import pyarrow as pa

    for name in ("flows", "queues", "drops"):  # NaN-aware, exact
        pd.testing.assert_frame_equal(pa.record_batch(with_hook[name]).to_pandas(), pa.record_batch(plain[name]).to_pandas(), check_exact=True)
    assert calls and calls[-1][0] == calls[-1][1] == 2.0
    assert all(a[0] <= b[0] and a[2] <= b[2] for a, b in itertools.pairwise(calls))
    assert calls[-1][2] == pa.record_batch(plain["run"]).column("events")[0].as_py()

    class Stop(Exception):
        pass

    def stop(now: float, end: float, ev: int) -> None:
        raise Stop()

    with pytest.raises(Stop):
        _dsim.run_task(toml, 5, [1, 0], stop)

    def interrupt_at_the_end(now: float, end: float, ev: int) -> None:
        if now >= end:  # a Ctrl-C during the last step: the run is complete, the stop still counts
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _dsim.run_task(toml, 5, [1, 0], interrupt_at_the_end)


def test_progress_bars_on_a_terminal_and_quiet_elsewhere(tmp_path: Path) -> None:
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=150)
    dsim.run(tiny(tmp_path), replications=2, progress=True, console=con)
    text = buf.getvalue()
    assert "s simulated" in text and "events/s" in text and "ETA" in text
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=150)
    dsim.sweep(tiny(tmp_path), {"flow[0].app.rate": ["1Mbps", "fast"]}, progress=True, console=con)
    text = buf.getvalue()
    assert "2/2 tasks" in text
    # Not a terminal: no bar.
    p = dsim_cli("sweep", str(tiny(tmp_path)), "--set", "flow[0].app.rate=1Mbps", "--out", str(tmp_path / "q"))
    assert p.returncode == 0 and "ETA" not in p.stdout and "events/s" not in p.stdout
    assert (tmp_path / "q" / "manifest.json").exists()


def test_a_task_file_with_damaged_metadata_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "task.parquet"
    table = pa.table({"_table": ["flows"]}).replace_schema_metadata({b"dsim": b"\x8a{not json"})
    pq.write_table(table, f)
    with pytest.raises(ValueError, match=r"^unreadable dsim metadata: UnicodeDecodeError"):
        read_task(f)


def test_a_sweep_says_it_writes_no_captures(tmp_path: Path) -> None:
    f = tiny(tmp_path, '\n[[capture]]\nnode = "A"\n')
    p = dsim_cli("sweep", str(f), "--set", "flow[0].app.rate=1Mbps", "--out", str(tmp_path / "s"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "note: a sweep writes no packet captures; the [[capture]] entries are for `dsim run`" in p.stdout
    assert not list(tmp_path.rglob("*.pcap"))
