"""Recording a run (`[record]`, `dsim run --record`, `dsim.run(record=...)`) and drawing
it (`Results.plot`, `dsim plot`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dsim
from test_front import THIRTY, dsim_cli


def test_record_through_run_adds_up(three_hops_text: str) -> None:
    res = dsim.run(three_hops_text, replications=2, record="500ms", jobs=1)
    assert res.recorded == ["flow_series", "port_series", "distributions"]
    s = res.flow_series
    assert sorted(s["start_s"].unique())[:3] == [1.0, 1.5, 2.0] and s["end_s"].max() == 10.0
    # Each flow's throughput over the window is the length-weighted mean of its intervals.
    weighted = (s["throughput_bps"] * (s["end_s"] - s["start_s"]) / 9.0).groupby([s["replication"], s["flow"]]).sum()
    table = res.flows.set_index(["replication", "flow"])["throughput_bps"]
    pd.testing.assert_series_equal(weighted.sort_index(), table.sort_index(), check_names=False, rtol=1e-12)
    plain = dsim.run(three_hops_text, replications=2, jobs=1)
    pd.testing.assert_frame_equal(plain.flows, res.flows, check_exact=True)
    with pytest.raises(dsim.ScenarioError, match=r"record\.interval"):
        dsim.run(three_hops_text, record="0s")
    with pytest.raises(dsim.ScenarioError, match="record = 5"):
        dsim.run(three_hops_text, record=5)


def test_plot_every_kind_of_a_recorded_run(tmp_path: Path) -> None:
    text = THIRTY.replace('app = { type = "cbr", rate = "100kbps", size = "500B" }', 'app = { type = "ftp" }\ntcp = { series = "50ms" }')
    text += '\n[[conditioner]]\nname = "meter"\nat = "A"\nmatch = { dscp = ["AF11"] }\nmeter = { type = "srtcm", cir = "300kbps", cbs = "3KB", ebs = "6KB" }\ngreen = { mark = "AF11" }\nyellow = { mark = "AF12" }\nred = "drop"\n'
    text = text.replace('queue = { type = "droptail", limit = "30p" }', 'queue = { type = "red", limit = "30p", min_th = "5p", max_th = "15p", max_p = 0.1, series = "20ms" }')
    f = tmp_path / "all.toml"
    f.write_text(text)
    out = tmp_path / "out"
    p = dsim_cli("run", str(f), "--out", str(out), "--record", "250ms")
    assert p.returncode == 0, p.stderr
    assert "recorded flow_series, port_series, conditioner_series, distributions" in p.stdout
    p = dsim_cli("plot", str(out), "--svg")
    assert p.returncode == 0, p.stderr
    for kind in dsim.plot.KINDS:
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{kind}.{ext}").stat().st_size > 5000, kind
    res = dsim.Results.load(out)
    assert res.name == "thirty" and res.scenario.data["record"] == {"interval": "250ms"}
    fig = res.plot.throughput()
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "throughput (Mbit/s)"
    assert ax.get_title(loc="left").startswith("thirty: throughput of the 8 fastest of 30 flows, 250 ms intervals")
    assert "mean of all 30" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_plot_says_what_to_record(three_hops_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain"
    assert dsim_cli("run", str(three_hops_file), "--out", str(out)).returncode == 0
    p = dsim_cli("plot", str(out))
    assert p.returncode == 2 and "nothing to draw" in p.stderr
    p = dsim_cli("plot", str(out), "queue")
    assert p.returncode == 2 and 'queue: these results have no port_series rows; the queue figure needs a run that records the "ports" series' in p.stderr
    p = dsim_cli("plot", str(out), "bars")
    assert p.returncode == 2 and "'bars': no such figure; kinds: throughput, class-throughput" in p.stderr
    p = dsim_cli("plot", str(tmp_path / "nowhere"))
    assert p.returncode == 2 and "not a folder of results" in p.stderr and "Traceback" not in p.stderr


def test_results_save_and_load_round_trip(three_hops_text: str, tmp_path: Path) -> None:
    res = dsim.run(three_hops_text, replications=2, record=True, jobs=1)
    for fmt in ("parquet", "csv"):
        back = dsim.Results.load(res.save(tmp_path / fmt, fmt))
        for name in ("flows", "queues", "flow_series", "distributions"):
            pd.testing.assert_frame_equal(getattr(back, name), getattr(res, name), check_dtype=fmt == "parquet")
        assert back.scenario.hash() == res.scenario.hash()
    assert np.isfinite(res.distributions["count"]).all()


def test_queue_figure_names_each_class_by_its_codepoints() -> None:
    # ef-voice.toml: the edge <-> isp link's priority scheduler, class 0 EF, class 1 default
    # (both directions: no direction overrides the link's queue).
    res = dsim.run(Path(__file__).parents[1] / "docs/examples/ef-voice.toml", record="1s", jobs=1)
    assert [res.queue_label("edge->isp", k) for k in (0, 1, 2)] == ["EF", "default", "queue 2"]
    assert res.queue_label("isp->edge", 0) == "EF"
    assert res.queue_label("phones->edge", 0) == "queue 0"  # a drop-tail port has no classes
    legend = [t.get_text() for t in res.plot.queue(["edge->isp"]).axes[0].get_legend().get_texts()]
    assert legend == ["edge->isp EF", "edge->isp default"]
