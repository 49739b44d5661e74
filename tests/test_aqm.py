"""CoDel, PIE and FQ-CoDel from Python (docs/aqm.md): the generated builders, replay with
their state, and the `aqm` / `aqm_series` tables of a run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dsim


def test_builders_write_the_scenario_tables() -> None:
    assert dsim.codel() == {"type": "codel"}
    assert dsim.codel(target="2ms", ecn=True) == {"type": "codel", "target": "2ms", "ecn": True}
    assert dsim.pie(delay="rate", derandomize=True)["delay"] == "rate"
    assert dsim.fq_codel(flows=16, quantum="300B") == {"type": "fq_codel", "flows": 16, "quantum": "300B"}


def test_replay_codel_drops_by_the_control_law_and_shows_its_state() -> None:
    # As the Rust test: 400 packets of 1000 B at 0 behind 8 Mbit/s (1 ms each); the sojourn
    # time reaches 5 ms at 5 ms, drops at 105, 205, 276, 334 ms take packets 105, 206, 278,
    # 337 (every drop moves the later packets one slot earlier).
    trace = pd.DataFrame({"time_ns": np.zeros(400, dtype=np.int64), "size": 1000})
    out = dsim.replay(dsim.codel(), trace, rate="8Mbps", series=True)
    dropped = list(out.index[out["dropped"]][:4])
    assert dropped == [105, 206, 278, 337]
    assert set(out.loc[out["dropped"], "drop_cause"]) == {"early"}
    assert {"delay_ms", "dropping", "count", "p", "flows"} <= set(out.columns)
    assert out["p"].isna().all() and (out["dropping"] == 0).all()


def test_replay_pie_raises_its_probability_under_overload() -> None:
    # 2 Mbit/s of 1000 B packets into 1 Mbit/s for 3 s: the delay grows past 15 ms, the
    # burst allowance (150 ms) runs out, drop_prob rises and early drops follow.
    trace = pd.DataFrame({"time_ns": np.arange(750) * 4_000_000, "size": 1000})
    out = dsim.replay(dsim.pie(), trace, rate="1Mbps", series=True)
    assert out["p"].iloc[0] == 0 and out["p"].max() > 0.01
    assert (out.loc[out["dropped"], "drop_cause"] == "early").any()


def _dumbbell(queue: dict) -> dsim.Scenario:
    sc = dsim.Scenario(duration="5s").hosts("a", "b", "d").routers("r")
    sc.link("a", "r", rate="100Mbps", delay="5ms")
    sc.link("b", "r", rate="100Mbps", delay="20ms")
    sc.link("r", "d", rate="5Mbps", delay="5ms", queue=queue)
    sc.flow("fat", src="a", dst="d", app=dsim.ftp())
    sc.flow("sparse", src="b", dst="d", app=dsim.cbr("200kbps", "200B"))
    return sc


@pytest.mark.parametrize("queue", [dsim.codel(series="100ms"), dsim.pie(series="100ms"), dsim.fq_codel(series="100ms")], ids=lambda q: q["type"])
def test_a_run_has_the_aqm_tables(queue: dict) -> None:
    res = dsim.run(_dumbbell(queue))
    row = res.aqm[res.aqm["port"] == "r->d"]
    assert len(row) == 1 and row["aqm"].iloc[0] == queue["type"]
    assert row["dequeue_marks_pkts"].iloc[0] == 0  # no ECN-capable sender here
    s = res.aqm_series[res.aqm_series["port"] == "r->d"]
    assert len(s) > 10 and (s["time_s"].diff().dropna() > 0).all()
    if queue["type"] == "fq_codel":
        assert row["new_flows"].iloc[0] >= 2 and s["flows"].max() >= 2
    if queue["type"] == "pie":
        assert row["p_max"].iloc[0] >= s["p"].max()


def test_fq_codel_keeps_a_sparse_flow_fast_behind_a_fat_tcp() -> None:
    # The CBR flow's delay stays near its path's (25 ms propagation) under FQ-CoDel, while
    # a FIFO of the same limit makes it wait behind the TCP flow's queue.
    fq = dsim.run(_dumbbell(dsim.fq_codel(limit="200p"))).flows.set_index("flow")
    fifo = dsim.run(_dumbbell(dsim.droptail("200p"))).flows.set_index("flow")
    assert fq.loc["sparse", "delay_p90_ms"] < 30
    assert fifo.loc["sparse", "delay_p90_ms"] > fq.loc["sparse", "delay_p90_ms"] + 50


def test_a_run_without_them_has_no_aqm_tables() -> None:
    res = dsim.run(_dumbbell(dsim.droptail("50p")))
    assert res.aqm.empty and res.aqm_series.empty
