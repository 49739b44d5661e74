"""Running scenarios from Python: tables, determinism, replications and their intervals."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dsim
from conftest import three_hops_builder

#: Student-t quantiles t_{0.95, nu} (two-sided 90 %), as scipy.stats.t.ppf(0.95, nu) gives them.
T95 = {5: 2.0150483733330233, 9: 1.833112932656237}


def test_builder_writes_the_file_schema(three_hops_text: str) -> None:
    built = three_hops_builder()
    from_file = dsim.Scenario.from_toml(three_hops_text)
    assert tomllib.loads(built.to_toml()) == tomllib.loads(three_hops_text)
    assert built.hash() == from_file.hash()
    assert built.canonical_toml() == from_file.canonical_toml()


def test_tables_and_units(builder: dsim.Scenario) -> None:
    res = dsim.run(builder, seed=3, replications=2)
    assert set(res.flows["flow"]) == {"f", "p"}
    assert len(res.flows) == 4 and res.replications == 2
    for col in ("sent_pkts", "delivered_bytes", "throughput_bps", "delay_p99_ms", "jitter_p90_ms", "drop_overflow_pkts"):
        assert col in res.flows.columns
    for col in ("port", "queue", "precedence", "arrivals_pkts", "mean_len_pkts", "mean_len_bytes"):
        assert col in res.queues.columns
    assert list(res.drops.columns) == ["replication", "flow", "site", "cause", "pkts", "bytes"]
    assert set(res.run.columns) >= {"seed", "base_seed", "scenario_hash", "version", "events", "wall_s"}
    assert (res.run["base_seed"] == 3).all()
    assert list(res.run["seed"]) == [dsim.replication_seed(3, 0), dsim.replication_seed(3, 1)]
    assert (res.run["version"] == dsim.__version__).all()
    # 1.4 Mbit/s offered into 1.5 Mbit/s: nothing is lost for long, and throughput follows
    # the offered load within what sits in the queue at the window's ends.
    f = res.flows[res.flows["flow"] == "f"]
    assert np.allclose(f["throughput_bps"], 1e6, rtol=0.02)


def test_same_seed_same_tables_whatever_the_jobs(builder: dsim.Scenario) -> None:
    a = dsim.run(builder, seed=11, replications=4, jobs=1)
    b = dsim.run(builder, seed=11, replications=4, jobs=4)
    c = dsim.run(builder, seed=12, replications=4, jobs=1)
    for name in ("flows", "queues", "drops"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    pd.testing.assert_frame_equal(a.run.drop(columns="wall_s"), b.run.drop(columns="wall_s"), check_exact=True)
    assert not a.flows.equals(c.flows)


def test_a_batch_runs_each_scenario_as_run_does_alone(builder: dsim.Scenario) -> None:
    from dsim.api import run_batch

    other = builder.copy().set("flow[0].app.rate", "1.2Mbps")
    broken = builder.copy().set("link[1].queue.limit", "0p")  # refused when the replication builds it
    a, b, c = run_batch([builder, other, broken], seed=5, replications=[2, 3, 1], jobs=2, validate=False)
    for res, sc, n in ((a, builder, 2), (b, other, 3)):
        alone = dsim.run(sc, seed=5, replications=n, jobs=1)
        for name in ("flows", "queues", "drops"):
            pd.testing.assert_frame_equal(getattr(res, name), getattr(alone, name), check_exact=True)
    # A scenario that fails is returned as its error; the others still ran.
    assert isinstance(c, dsim.ScenarioError) and "replication 0" in str(c)
    with pytest.raises(ValueError, match="2 replication counts for 3 scenarios"):
        run_batch([builder, other, broken], replications=[1, 2])


def test_replications_have_the_documented_student_t_interval(builder: dsim.Scenario) -> None:
    res = dsim.run(builder, seed=1, replications=6)
    s = res.summary("flows").set_index("flow")
    x = res.flows[res.flows["flow"] == "p"]["delay_mean_ms"].to_numpy()
    # mean +- t(0.95, n-1) s / sqrt(n): a two-sided 90 % interval.
    half = T95[len(x) - 1] * x.std(ddof=1) / math.sqrt(len(x))
    assert s.loc["p", "n"] == 6
    assert s.loc["p", "delay_mean_ms"] == pytest.approx(x.mean(), rel=1e-12)
    assert s.loc["p", "delay_mean_ms_ci"] == pytest.approx(half, rel=1e-12)
    assert s.loc["p", "delay_mean_ms_lo"] == pytest.approx(x.mean() - half, rel=1e-12)
    assert half > 0


def test_one_replication_has_no_interval(builder: dsim.Scenario) -> None:
    s = dsim.run(builder, replications=1).summary()
    assert s["throughput_bps_ci"].isna().all()


def test_save_writes_tables_and_summary(builder: dsim.Scenario, tmp_path: Path) -> None:
    res = dsim.run(builder, replications=2)
    for fmt in ("parquet", "csv"):
        out = res.save(tmp_path / fmt, fmt)
        for name in ("flows", "queues", "drops", "run"):
            assert (out / f"{name}.{fmt}").exists()
        back = pd.read_parquet(out / "flows.parquet") if fmt == "parquet" else pd.read_csv(out / "flows.csv")
        assert list(back["flow"]) == list(res.flows["flow"])
        summary = json.loads((out / "summary.json").read_text())
        assert summary["replications"] == 2 and summary["confidence_level"] == 0.9
        assert {f["flow"] for f in summary["flows"]} == {"f", "p"}


def test_scenario_path_and_text_are_accepted(three_hops_file: Path, three_hops_text: str) -> None:
    a = dsim.run(three_hops_file, seed=5)
    b = dsim.run(str(three_hops_file), seed=5)
    c = dsim.run(three_hops_text, seed=5)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.flows, c.flows)


def test_summary_counts_a_replication_without_drops_as_zero_and_checks_its_arguments() -> None:
    sc = dsim.Scenario("2s", warmup="0.2s").hosts("A", "B").routers("R")
    sc.link("A", "R", rate="10Mbps", delay="1ms")
    sc.link("R", "B", rate="1Mbps", delay="1ms", queue=dsim.droptail("4p"))
    sc.flow("p", src="A", dst="B", app=dsim.poisson("500kbps", "1000B"))
    r = dsim.run(sc, replications=10, seed=1, jobs=1)
    per_rep = r.flows["dropped_pkts"].to_numpy()
    assert 0 < (per_rep > 0).sum() < 10  # some replications drop, some do not: the drops table is sparse
    [row] = r.summary("drops").to_dict("records")
    assert row["n"] == 10 and row["pkts"] == pytest.approx(per_rep.mean())
    assert row["pkts_ci"] == pytest.approx(T95[9] * per_rep.std(ddof=1) / math.sqrt(10))
    assert list(r.summary("flows", by="flow")["flow"]) == ["p"]  # a single name, not a list
    for kwargs, words in (
        (dict(level=-0.5), "level = -0.5: a confidence level lies strictly between 0 and 1"),
        (dict(level=95), "level = 95"),
        (dict(by=["flwo"]), "by = ['flwo']: no column 'flwo'"),
        (dict(columns="goodput"), "columns = ['goodput']: no column 'goodput'"),
    ):
        with pytest.raises(dsim.ScenarioError, match=re.escape(words)):
            r.summary("flows", **kwargs)
    with pytest.raises(dsim.ScenarioError, match="table 'flow': no such table here"):
        r.summary("flow")
    with pytest.raises(dsim.ScenarioError, match="table 'queue_series': its samples fall at other times"):
        r.summary("queue_series")


def test_edits_of_a_read_scenario_through_its_data_are_run(three_hops_text: str) -> None:
    sc = dsim.Scenario.from_toml(three_hops_text)
    assert sc.to_toml() == three_hops_text
    sc.data["duration"] = "7s"
    sc.get("flow")[0]["app"]["rate"] = "123kbps"
    text = sc.to_toml()
    assert 'duration = "7s"' in text and "123kbps" in text
    assert dsim.run(sc, replications=1).run["sim_time_s"].iloc[0] == 7.0
