"""EF schedulers (RFC 2598): scenario syntax, its errors, the jitter columns, the figure 6
topology file and the arithmetic of the A.3 tables."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import pytest

import dsim
from dsim import Scenario, cbq, cbr, drr, klass, priority, wrr
from dsim.reproduce import ef


def one_link(queue: dict) -> Scenario:
    sc = Scenario(duration="3s")
    sc.hosts("A", "B").link("A", "B", rate="1Mbps", delay="1ms", queue=queue)
    sc.flow("f", src="A", dst="B", app=cbr("100kbps", "100B"), dscp="EF")
    return sc


PQ = priority(klass("EF", limit_rate="450kbps", limit_burst="3000B"), klass(default=True))


@pytest.mark.parametrize(
    "queue",
    [
        PQ,
        priority(klass(["EF", "AF11"], queue=dsim.droptail("20p")), klass("AF21"), klass(default=True, queue=dsim.droptail("64KB"))),
        wrr(klass("EF", weight=3), klass(default=True, weight=1)),
        drr(klass("EF", quantum="1500B"), klass(default=True, quantum="500B")),
        cbq(klass("EF", weight=1, priority_rate="300kbps", priority_burst="3000B"), klass(default=True, weight=2)),
        cbq(klass("EF", quantum="1500B", priority_rate="300kbps", priority_burst="3000B"), klass(default=True, quantum="1500B"), scheduler="drr"),
        # Every codepoint listed: no default class needed.
        wrr(klass(list(range(32)), weight=1), klass(list(range(32, 64)), weight=1)),
    ],
)
def test_valid_scheduler_specs(queue: dict) -> None:
    one_link(queue).validate()


# (queue spec, key path, rule fragment)
ERRORS = [
    (priority(), "link[0].queue.classes", "at least one class"),
    (priority(klass(), klass(default=True)), "link[0].queue.classes[0]", "must list its codepoints"),
    (priority(klass(["EF", "AF11"]), klass("AF11", default=True)), "link[0].queue.classes[1].dscp[0]", "AF11 is already in classes[0]"),
    (priority(klass(["EF", "EF"]), klass(default=True)), "link[0].queue.classes[0].dscp[1]", "listed twice"),
    (wrr(klass("EF", weight=1, default=True), klass(default=True, weight=2)), "link[0].queue.classes[1].default", "only one"),
    (wrr(klass("EF", weight=1), klass("AF11", weight=2)), "link[0].queue.classes", "no class is the default"),
    (wrr(klass("EF", weight=0), klass(default=True, weight=2)), "link[0].queue.classes[0].weight", "at least 1"),
    (wrr(klass("EF"), klass(default=True, weight=2)), "link[0].queue.classes[0]", "needs a weight"),
    (wrr(klass("EF", weight=1, quantum="1500B"), klass(default=True, weight=2)), "link[0].queue.classes[0].quantum", "not a setting of a wrr class"),
    (drr(klass("EF", quantum="0B"), klass(default=True, quantum="1500B")), "link[0].queue.classes[0].quantum", "at least 1 byte"),
    (drr(klass("EF", quantum="1500B"), klass(default=True)), "link[0].queue.classes[1]", "needs a quantum"),
    (drr(klass("EF", quantum="1500B", weight=2), klass(default=True, quantum="1B")), "link[0].queue.classes[0].weight", "not a setting of a drr class"),
    (priority(klass("EF", limit_rate="0bps", limit_burst="3000B"), klass(default=True)), "link[0].queue.classes[0].limit_rate", "greater than 0"),
    (priority(klass("EF", limit_rate="450kbps"), klass(default=True)), "link[0].queue.classes[0].limit_rate", "needs limit_burst"),
    (priority(klass("EF", limit_burst="3000B"), klass(default=True)), "link[0].queue.classes[0].limit_burst", "needs limit_rate"),
    (priority(klass("EF", limit_rate="450kbps", limit_burst="0B"), klass(default=True)), "link[0].queue.classes[0].limit_burst", "at least 1 byte"),
    (priority(klass("EF", weight=2), klass(default=True)), "link[0].queue.classes[0].weight", "not a setting of a priority class"),
    (priority(klass("EF", queue=wrr(klass(default=True, weight=1))), klass(default=True)), "link[0].queue.classes[0].queue.type", "single queue"),
    (priority(klass("EF", queue=dsim.droptail("0p")), klass(default=True)), "link[0].queue.classes[0].queue.limit", "at least one packet"),
    (cbq(klass("EF", weight=1), klass(default=True, weight=1)), "link[0].queue.classes", "needs one class with priority_rate"),
    (
        cbq(klass("EF", weight=1, priority_rate="1kbps", priority_burst="1500B"), klass(default=True, weight=1, priority_rate="1kbps", priority_burst="1500B")),
        "link[0].queue.classes[1].priority_rate",
        "already has the priority allowance",
    ),
    (cbq(klass("EF", weight=1, priority_rate="1kbps"), klass(default=True, weight=1)), "link[0].queue.classes[0].priority_rate", "needs priority_burst"),
    (cbq(klass("EF", weight=1, priority_rate="0kbps", priority_burst="1B"), klass(default=True, weight=1)), "link[0].queue.classes[0].priority_rate", "greater than 0"),
    (
        cbq(klass("EF", quantum="1500B", priority_rate="1kbps", priority_burst="1500B"), klass(default=True, quantum="1500B")),
        "link[0].queue.classes[0].quantum",
        "not a setting of a cbq (over weights) class",
    ),
    (
        cbq(klass("EF", quantum="1500B", priority_rate="1kbps", priority_burst="1B"), klass(default=True), scheduler="drr"),
        "link[0].queue.classes[1]",
        "CBQ-over-DRR class needs a quantum",
    ),
    (
        cbq(klass("EF", weight=1, limit_rate="1kbps", limit_burst="1B", priority_rate="1kbps", priority_burst="1B"), klass(default=True, weight=1)),
        "link[0].queue.classes[0].limit_rate",
        "not a setting of a cbq",
    ),
]


@pytest.mark.parametrize("queue,path,rule", ERRORS)
def test_scheduler_errors_name_the_key_and_the_rule(queue: dict, path: str, rule: str) -> None:
    with pytest.raises(dsim.ScenarioError) as info:
        one_link(queue).validate()
    assert info.value.path == path, str(info.value)
    assert rule in info.value.rule, str(info.value)
    assert info.value.line is not None


# Errors serde reports while reading the file: they stop at the queue's key path (the
# classes sit inside an internally tagged table), but the message names the field.
READ_ERRORS = [
    (cbq(klass("EF", weight=1, priority_rate="1kbps", priority_burst="1B"), klass(default=True, weight=1), scheduler="fifo"), "link[0].queue.scheduler", "unknown variant `fifo`"),
    (priority({"dscp": ["EF"], "wieght": 3}, klass(default=True)), "link[0].queue.classes[0].wieght", "unknown field `wieght`"),
    (priority(klass("EF", limit_rate="450", limit_burst="3000B"), klass(default=True)), "link[0].queue.classes[0].limit_rate", "has no unit"),
    (priority(klass("AF51"), klass(default=True)), "link[0].queue.classes[0].dscp[0]", "not an AF codepoint"),
    (wrr(klass("EF", weight=-1), klass(default=True, weight=1)), "link[0].queue.classes[0].weight", "integer `-1`"),
    ({"type": "wrr"}, "link[0].queue", "missing field `classes`"),
]


@pytest.mark.parametrize("queue,path,fragment", READ_ERRORS)
def test_malformed_scheduler_specs_are_refused(queue: dict, path: str, fragment: str) -> None:
    with pytest.raises(dsim.ScenarioError) as info:
        one_link(queue).validate()
    assert info.value.path == path
    assert fragment in str(info.value)


def test_klass_builder_writes_the_file_syntax() -> None:
    assert klass("EF", limit_rate="450kbps", limit_burst="3000B") == {"dscp": ["EF"], "limit_rate": "450kbps", "limit_burst": "3000B"}
    assert klass(default=True, weight=2, queue=dsim.droptail("50p")) == {"default": True, "weight": 2, "queue": {"type": "droptail", "limit": "50p"}}
    assert cbq(klass(default=True, quantum="1500B"), scheduler="drr")["scheduler"] == "drr"
    text = one_link(PQ).to_toml()
    assert Scenario.from_toml(text).canonical_toml() == one_link(PQ).canonical_toml()


def two_flow_dumbbell(queue: dict) -> Scenario:
    """EF CBR 400 kbit/s and best effort CBR 2 Mbit/s into a 1 Mbit/s link."""
    sc = Scenario(duration="20s", warmup="2s")
    sc.hosts("E", "B", "D").routers("R")
    sc.link("E", "R", rate="100Mbps", delay="1ms").link("B", "R", rate="100Mbps", delay="1ms")
    sc.link("R", "D", rate="1Mbps", delay="5ms", queue=queue)
    sc.flow("ef", src="E", dst="D", dscp="EF", app=cbr("400kbps", "500B", spacing_variation="10%"))
    sc.flow("be", src="B", dst="D", app=cbr("2Mbps", "1000B", spacing_variation="10%"))
    return sc


def test_pq_protects_ef_and_the_queues_table_has_one_row_per_class() -> None:
    res = dsim.run(two_flow_dumbbell(priority(klass("EF", limit_rate="500kbps", limit_burst="5000B"), klass(default=True))))
    f = res.flows.set_index("flow")
    assert f.loc["ef", "dropped_pkts"] == 0
    # Base delay 0.04 + 1 + 4 + 5 = 10.04 ms; waits at most one BE packet (8 ms) and the
    # EF packets that came meanwhile (8 / 9 ms spacing -> one, 4 ms).
    assert f.loc["ef", "delay_max_ms"] <= 10.04 + 8 + 4 + 1e-6
    assert f.loc["ef", "throughput_bps"] + f.loc["be", "throughput_bps"] == pytest.approx(1e6, rel=2e-3)
    q = res.queues[res.queues["port"] == "R->D"]
    assert list(q["queue"]) == [0, 1]
    assert "drop_rate_limit_pkts" in res.queues.columns
    assert q["drop_overflow_pkts"].iloc[1] > 0 and q["drop_overflow_pkts"].iloc[0] == 0


def test_jitter_pct_columns() -> None:
    res = dsim.run(two_flow_dumbbell(wrr(klass("EF", weight=1), klass(default=True, weight=1))))
    f = res.flows.set_index("flow")
    # packet time at the subscribed rate: 500 B at 400 kbit/s = 10 ms; 1000 B at 2 Mbit/s = 4 ms.
    assert f.loc["ef", "packet_time_ms"] == 10.0
    assert f.loc["be", "packet_time_ms"] == 4.0
    for p in ("p50", "p90"):
        assert f.loc["ef", f"jitter_{p}_pct"] == pytest.approx(100 * f.loc["ef", f"jitter_{p}_ms"] / 10.0)


def figure6() -> Scenario:
    ref = resources.files("dsim") / "scenarios" / "ef" / "figure6.toml"
    with resources.as_file(ref) as path:
        return Scenario.from_toml(Path(path))


def test_figure6_topology_runs_without_ef_loss() -> None:
    sc = figure6()
    assert sc.name == "ef-figure6"
    sc.set("duration", "40s")
    res = dsim.run(sc, replications=1)
    f = res.flows.set_index("flow")
    assert len(f) == 8 and (f["dscp"] == "EF").all()
    assert f["dropped_pkts"].sum() == 0
    # 8 x 56 kbit/s of EF reach D: 448 kbit/s, the document's 30 % of 1.5 Mbit/s.
    assert f["throughput_bps"].sum() == pytest.approx(448e3, rel=0.02)
    assert f.loc["ef1500", "packet_time_ms"] == pytest.approx(214.2857, abs=1e-3)
    assert f.loc["ef160", "packet_time_ms"] == pytest.approx(22.857, abs=1e-3)
    # Six hops for the target flows: the bottleneck R5->D and the five before it.
    ports = set(res.queues["port"])
    for hop in ("S1->R1", "R1->R2", "R2->R3", "R3->R4", "R4->R5", "R5->D"):
        assert hop in ports
    # EF alone under PQ: jitter well below one packet time.
    assert f.loc["ef1500", "jitter_p90_pct"] < 10
    assert math.isfinite(f.loc["ef160", "jitter_p50_pct"])


# -- the arithmetic of the A.3 tables ------------------------------------------------------


def test_packet_times_of_the_document() -> None:
    # A.3.1: "a packet-time for a 1500 byte packet at 56 Kbps is 214 ms, for a 160 byte
    # packet 23 ms".
    assert round(ef.packet_time_ms(1500, 56_000)) == 214
    assert round(ef.packet_time_ms(160, 56_000)) == 23


def test_share_of_the_document() -> None:
    # "we used a minimum service-to-arrival ratio of 1.03 ... the EF queue gets at least
    # 31% of the output links": 1.03 x 450 / 1500 = 0.309.
    assert ef.ef_share(1.03) == pytest.approx(0.309)
    assert ef.service_to_arrival_ratio(0.309, 1.5e6, 450e3) == pytest.approx(1.03)
    with pytest.raises(ValueError):
        ef.ef_share(3.5)  # 3.5 x 450 kbit/s exceeds the link


def test_drr_quanta_realise_the_ratio() -> None:
    # 5 queues, ratio 1.03: share 0.309; q_e = 0.309 / 0.691 x 4 x 1500 = 2683.07 -> 2684.
    q_e, q_o = ef.drr_quanta(1.03, 5)
    assert (q_e, q_o) == (2684, 1500)
    share = q_e / (q_e + 4 * q_o)
    assert ef.service_to_arrival_ratio(share, 1.5e6, 450e3) == pytest.approx(1.03, abs=1e-3)
    assert ef.service_to_arrival_ratio(share, 1.5e6, 450e3) >= 1.03


def test_mean_packet_and_wrr_weights() -> None:
    flows = [(56_000, 1500)] * 4 + [(56_000, 160)] * 4
    s = ef.mean_packet_bytes(flows)
    # bytes/s 4 x 7000 x 2 = 56000; packets/s 4 x (7000/1500 + 7000/160) = 193.67 -> 289.2 B
    assert s == pytest.approx(56000 / (4 * (7000 / 1500 + 7000 / 160)))
    for ratio in (1.03, 1.3, 1.5, 2.0, 3.0):
        w_e, w_o, achieved = ef.wrr_weights(ratio, 5, s)
        assert ratio <= achieved <= ratio * 1.01, (ratio, w_e, w_o, achieved)
        assert achieved == pytest.approx(ef.service_to_arrival_ratio(ef.wrr_share(w_e, w_o, 5, s), 1.5e6, 450e3))


def test_scheduler_specs_validate_and_split_the_codepoints() -> None:
    s = ef.mean_packet_bytes([(56_000, 1500)] * 4 + [(56_000, 160)] * 4)
    assert ef.non_ef_codepoints(5) == ["CS1", "CS2", "CS3", "BE"]
    for spec in (ef.scheduler_spec("pq"), ef.scheduler_spec("wrr", queues=5, ratio=1.03, ef_mean_packet=s), ef.scheduler_spec("drr", queues=8, ratio=1.5)):
        one_link(spec).validate()
    spec = ef.scheduler_spec("drr", queues=3, ratio=1.03)
    assert [c.get("dscp") for c in spec["classes"]] == [["EF"], ["CS1"], ["BE"]]
    assert spec["classes"][-1]["default"] is True
    with pytest.raises(ValueError):
        ef.scheduler_spec("wrr", queues=5, ratio=1.03)


def test_jitter_table_and_vll_gap() -> None:
    import pandas as pd

    flows = pd.DataFrame(
        {
            "replication": [0, 0, 1, 1],
            "flow": ["ef1500", "ef160", "ef1500", "ef160"],
            "jitter_p50_pct": [10.0, 90.0, 12.0, 100.0],
            "jitter_p90_pct": [20.0, 120.0, 30.0, 140.0],
        }
    )
    t = ef.jitter_table(flows, {"1500": "ef1500", "160": "ef160"})
    assert t.iloc[0].to_dict() == {"p50_1500": 11.0, "p90_1500": 25.0, "p50_160": 95.0, "p90_160": 130.0, "n": 2}
    with pytest.raises(KeyError):
        ef.jitter_table(flows, {"x": "nope"})
    # Table 4, 60 % row: VLL 215 vs dedicated 213 kbit/s -> 0.94 %.
    assert ef.vll_gap(215, 213) == pytest.approx(2 / 213)
    assert list(ef.TABLE4["vll_kbps"]) == [90, 143, 215]
