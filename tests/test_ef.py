"""EF schedulers (RFC 2598): scenario syntax, its errors, the jitter columns, the figure 6
topology file and the arithmetic of the A.3 tables."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import pandas as pd
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
        cbq(klass("EF", share=0.3, borrow=False, maxidle="0s"), klass(default=True, share=0.7, priority=1), scheduler="prr"),
        cbq(
            klass("EF", share=0.2, parent="af"),
            klass("AF11", share="30%", parent="af", priority=1, queue=dsim.red("40p", "5p", "15p")),
            klass(default=True, share=0.4, priority=1),
            scheduler="wrr",
            interior=[dsim.cbq_interior("af", 0.5, maxidle="10ms")],
            guideline="formal",
            maxpkt="1500B",
            restart="arrival",
        ),
        # Every codepoint listed: no default class needed.
        wrr(klass(list(range(32)), weight=1), klass(list(range(32, 64)), weight=1)),
    ],
)
def test_valid_scheduler_specs(queue: dict) -> None:
    one_link(queue).validate()


# (queue spec, key path, rule fragment)
ERRORS = [
    (priority(), "link[0].queue.classes", "classes must not be empty"),
    (priority(klass(), klass(default=True)), "link[0].queue.classes[0]", "must list its codepoints"),
    (priority(klass(["EF", "AF11"]), klass("AF11", default=True)), "link[0].queue.classes[1].dscp[0]", "AF11 is already in classes[0]"),
    (priority(klass(["EF", "EF"]), klass(default=True)), "link[0].queue.classes[0].dscp[1]", "listed twice"),
    (wrr(klass("EF", weight=1, default=True), klass(default=True, weight=2)), "link[0].queue.classes[1].default", "only one"),
    (wrr(klass("EF", weight=1), klass("AF11", weight=2)), "link[0].queue.classes", "no class is the default"),
    (wrr(klass("EF", weight=0), klass(default=True, weight=2)), "link[0].queue.classes[0].weight", "at least 1"),
    (wrr(klass("EF"), klass(default=True, weight=2)), "link[0].queue.classes[0]", "missing field `weight`"),
    (wrr(klass("EF", weight=1, quantum="1500B"), klass(default=True, weight=2)), "link[0].queue.classes[0].quantum", "unknown field `quantum`"),
    (drr(klass("EF", quantum="0B"), klass(default=True, quantum="1500B")), "link[0].queue.classes[0].quantum", "quantum must be at least 1B"),
    (drr(klass("EF", quantum="1500B"), klass(default=True)), "link[0].queue.classes[1]", "missing field `quantum`"),
    (drr(klass("EF", quantum="1500B", weight=2), klass(default=True, quantum="1B")), "link[0].queue.classes[0].weight", "unknown field `weight`"),
    (priority(klass("EF", limit_rate="0bps", limit_burst="3000B"), klass(default=True)), "link[0].queue.classes[0].limit_rate", "greater than 0"),
    (priority(klass("EF", limit_rate="450kbps"), klass(default=True)), "link[0].queue.classes[0].limit_rate", "needs limit_burst"),
    (priority(klass("EF", limit_burst="3000B"), klass(default=True)), "link[0].queue.classes[0].limit_burst", "needs limit_rate"),
    (priority(klass("EF", limit_rate="450kbps", limit_burst="0B"), klass(default=True)), "link[0].queue.classes[0].limit_burst", "limit_burst must be greater than 0B"),
    (priority(klass("EF", weight=2), klass(default=True)), "link[0].queue.classes[0].weight", "unknown field `weight`"),
    (priority(klass("EF", queue=wrr(klass(default=True, weight=1))), klass(default=True)), "link[0].queue.classes[0].queue.type", "single queue"),
    (priority(klass("EF", queue=dsim.droptail("0p")), klass(default=True)), "link[0].queue.classes[0].queue.limit", "limit must be greater than 0"),
    (cbq(klass("EF", share=0.6), klass(default=True, share=0.5), scheduler="prr"), "link[0].queue.classes[1].share", "the shares of the children of the link sum to 1.100000, above its share 1"),
    (
        cbq(klass("EF", share=0.2, parent="X"), klass(default=True, share=0.2, parent="X"), scheduler="wrr", interior=[dsim.cbq_interior("X", 0.3)]),
        "link[0].queue.classes[1].share",
        "children of interior class \"X\" sum to 0.400000",
    ),
    (cbq(klass("EF", share=0.2, parent="Y"), klass(default=True, share=0.2), scheduler="prr"), "link[0].queue.classes[0].parent", "no interior class has this name"),
    (
        cbq(klass("EF", share=0.2, parent="X"), klass(default=True, share=0.2), scheduler="prr", interior=[dsim.cbq_interior("X", 0.3, parent="Y"), dsim.cbq_interior("Y", 0.3, parent="X")]),
        "link[0].queue.interior[0].parent",
        "the interior classes form a cycle",
    ),
    (cbq(klass(default=True, share=0.2), scheduler="prr", interior=[dsim.cbq_interior("X", 0.3)]), "link[0].queue.interior[0]", "an interior class has at least one child"),
    (cbq(klass("EF", share=0.0), klass(default=True, share=0.5), scheduler="prr"), "link[0].queue.classes[0].share", "share must lie in (0, 1]"),
    (cbq(klass("EF", share=0.5, priority=10), klass(default=True, share=0.5), scheduler="prr"), "link[0].queue.classes[0].priority", "priority must lie in [0, 9]"),
    (cbq(klass("EF", share=0.5), klass(default=True), scheduler="prr"), "link[0].queue.classes[1]", "missing field `share`"),
    (cbq(klass("EF", share=0.5, weight=1), klass(default=True, share=0.5), scheduler="wrr"), "link[0].queue.classes[0].weight", "unknown field `weight`"),
]


@pytest.mark.parametrize("queue,path,rule", ERRORS)
def test_scheduler_errors_name_the_key_and_the_rule(queue: dict, path: str, rule: str) -> None:
    with pytest.raises(dsim.ScenarioError) as info:
        one_link(queue).validate()
    assert info.value.path == path, str(info.value)
    assert rule in info.value.rule, str(info.value)
    assert info.value.line is None  # built in Python: the TOML it was written to is nobody's file
    with pytest.raises(dsim.ScenarioError) as from_text:  # the same as text: the line in it
        dsim.Scenario.from_toml(one_link(queue).to_toml())
    assert from_text.value.path == path and from_text.value.line is not None


# Errors serde reports while reading the file: they stop at the queue's key path (the
# classes sit inside an internally tagged table), but the message names the field.
READ_ERRORS = [
    (cbq(klass(default=True, share=1), scheduler="fifo"), "link[0].queue.scheduler", "unknown variant `fifo`"),
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
    assert cbq(klass(default=True, share=1), scheduler="prr", interior=[dsim.cbq_interior("X", "50%")]) == {
        "type": "cbq",
        "scheduler": "prr",
        "classes": [{"default": True, "share": 1}],
        "interior": [{"name": "X", "share": "50%"}],
    }
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


def test_cbq_table_counts_what_each_leaf_sent_and_how(tmp_path: Path) -> None:
    # EF 400 kbit/s into a bounded class of share 0.3 (no borrowing), best effort 2 Mbit/s
    # into share 0.7: EF is held back (delay actions, never a borrowed packet); best effort
    # takes the rest of the 1 Mbit/s link, beyond its 0.7, by borrowing. No warm-up, so the
    # counters (whole run) and the queues table (the window) cover the same packets: each
    # leaf's sent + borrowed + unregulated are its queue's departures.
    queue = cbq(klass("EF", share=0.3, borrow=False, maxidle="0s"), klass(default=True, share=0.7), scheduler="prr")
    sc = two_flow_dumbbell(queue).set("warmup", "0s")
    res = dsim.run(sc, replications=2)
    c = res.cbq.set_index(["replication", "port", "queue"])
    assert sorted(set(c.index.droplevel("replication"))) == [("D->R", 0), ("D->R", 1), ("R->D", 0), ("R->D", 1)]
    q = res.queues.set_index(["replication", "port", "queue"])["departures_pkts"]
    sent = c["sent_pkts"] + c["borrowed_pkts"] + c["unregulated_pkts"]
    assert (sent == q.reindex(sent.index)).all() and (sent.xs("R->D", level="port") > 0).all()
    ef, be = c.xs(("R->D", 0), level=("port", "queue")), c.xs(("R->D", 1), level=("port", "queue"))
    assert (ef["borrowed_pkts"] == 0).all() and (ef["delays"] > 0).all()
    # Best effort sent more than its share (the link's 1 Mbit/s less EF's): at least the
    # packets beyond 0.7 of the link were borrowed.
    be_bps = res.flows.set_index(["replication", "flow"]).xs("be", level="flow")["throughput_bps"]
    assert (be_bps > 0.7e6).all() and (be["borrowed_pkts"] >= be["sent_pkts"].add(be["borrowed_pkts"]) * (1 - 0.7e6 / be_bps)).all()
    res.save(tmp_path / "out")
    pd.testing.assert_frame_equal(dsim.Results.load(tmp_path / "out").cbq, res.cbq, check_dtype=False)
    # Without CBQ there is no such table, in memory or on disk.
    plain = dsim.run(two_flow_dumbbell(priority(klass("EF"), klass(default=True))))
    assert plain.cbq.empty
    plain.save(tmp_path / "plain")
    assert not (tmp_path / "plain" / "cbq.parquet").exists()


def test_jitter_pct_columns() -> None:
    res = dsim.run(two_flow_dumbbell(wrr(klass("EF", weight=1), klass(default=True, weight=1))))
    f = res.flows.set_index("flow")
    # packet time at the subscribed rate: 500 B at 400 kbit/s = 10 ms; 1000 B at 2 Mbit/s = 4 ms.
    assert f.loc["ef", "packet_time_ms"] == 10.0
    assert f.loc["be", "packet_time_ms"] == 4.0
    for p in ("p50", "p90"):
        assert f.loc["ef", f"jitter_{p}_pct"] == pytest.approx(100 * f.loc["ef", f"jitter_{p}_ms"] / 10.0)


def packaged(name: str) -> Scenario:
    ref = resources.files("dsim") / "scenarios" / "ef" / name
    with resources.as_file(ref) as path:
        return Scenario.from_toml(Path(path))


def test_figure6_topology_runs_without_ef_loss() -> None:
    sc = packaged("figure6.toml")
    assert sc.name == "ef-figure6"
    sc.set("duration", "40s")
    res = dsim.run(sc, replications=1)
    f = res.flows.set_index("flow")
    ef_flows = f[f["dscp"] == "EF"]
    assert len(ef_flows) == 8 and len(f) == 8 + 7 + 14
    assert ef_flows["dropped_pkts"].sum() == 0
    # 56 + 56 + 6 x 56.333 kbit/s of EF reach D: 450 kbit/s, the document's 30 % of 1.5 Mbit/s.
    assert ef_flows["throughput_bps"].sum() == pytest.approx(450e3, rel=0.02)
    assert f.loc["ef1500", "packet_time_ms"] == pytest.approx(214.2857, abs=1e-3)
    assert f.loc["ef160", "packet_time_ms"] == pytest.approx(22.857, abs=1e-3)
    # Six hops for the target flows: the bottleneck R5->D and the five before it.
    ports = set(res.queues["port"])
    for hop in ("S1->R1", "R1->R2", "R2->R3", "R3->R4", "R4->R5", "R5->D"):
        assert hop in ports
    # The background fills the bottleneck: EF + the rest carry 1.5 Mbit/s.
    bottleneck = res.queues[res.queues["port"] == "R5->D"]
    assert bottleneck["throughput_bps"].sum() == pytest.approx(1.5e6, rel=0.01)
    # PQ: the 1500 B flow's jitter well below one packet time.
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
    with pytest.raises(ValueError, match="it must lie in"):
        ef.ef_share(3.5)  # 3.5 x 450 kbit/s exceeds the link


def test_ns2_allotments() -> None:
    # ns-2 CBQ/WRR, 5 classes, maxpkt 1500: a round of 7500 B. Share 0.309: EF
    # ceil(0.309 x 7500) = ceil(2317.5) = 2318 B; others floor(0.691 x 7500 / 4) =
    # floor(1295.6) = 1295 B. EF's byte share 2318 / (2318 + 4 x 1295) = 0.30915 >= 0.309.
    q_e, q_o = ef.drr_quanta(0.309, 5)
    assert (q_e, q_o) == (2318, 1295)
    assert ef.service_to_arrival_ratio(q_e / (q_e + 4 * q_o), 1.5e6, 450e3) >= 1.03
    # Two classes: a round of 3000 B, EF 927 B, the other 2073 B.
    assert ef.drr_quanta(0.309, 2) == (927, 2073)
    with pytest.raises(ValueError, match="the EF queue and at least one other"):
        ef.drr_quanta(0.3, 1)


def test_ns2_visit_bytes_hand_computed() -> None:
    # WRR_CBQueue::deque with 1500 B packets (alloc before the visit -> after):
    # allot 1295: 0 -> +1295 send -> -205 | +1295 = 1090 send -> -410 | 885 -> -615 |
    # 680 -> -820 | 475 -> -1025 | 270 -> -1230 | 65 -> -1435 | -140: skipped, reset to 0.
    # 7 packets in 8 visits: 10500 / 8 = 1312.5 B per visit.
    assert ef.ns2_visit_bytes(1295) == 1312.5
    # allot 751: 751 send -> -749 | 2 send -> -1498 | -747 skipped -> 0: 2 packets in 3 visits.
    assert ef.ns2_visit_bytes(751) == 1000.0
    # Half a packet or less: one packet every second visit, whatever the allotment.
    for a in (1, 187, 750):
        assert ef.ns2_visit_bytes(a) == 750.0
    # At least a packet: exactly the allotment (3375 B: 3 packets, then 2, ... 2.25 per visit).
    for a in (1500, 2318, 3375):
        assert ef.ns2_visit_bytes(a) == a
    # Ratio 3.0 with 5 queues: share 0.9, the others' 187 B are served as 750 B.
    assert ef.ns2_quanta(ef.ef_share(3.0), 5) == (6750, 750)
    assert ef.ns2_quanta(ef.ef_share(1.03), 5) == (2318, 1313)


def test_cbq_wrr_serves_backlogged_classes_as_ns2() -> None:
    # dsim's CBQ/WRR (the Rust scheduler) against this module's model of
    # WRR_CBQueue::deque (ns2_visit_bytes, written apart from it): five backlogged classes
    # of 1500 B packets, shares 0.309 and 4 x 0.17275, maxpkt 1500 B: allotments 2317 and
    # 1295 B, served as 2317 and 1312.5 B per visit. Every class may borrow, so the
    # estimator holds none back. In the first 2000 departures each class is within one
    # packet of its share of 2317 : 4 x 1312.5.
    share, other = 0.309, (1 - 0.309) / 4
    backlog = dsim.droptail("2000p")
    queue = cbq(
        klass("EF", share=share, queue=backlog),
        *[klass(d, share=other, queue=backlog) for d in ("CS1", "CS2", "CS3")],
        klass(default=True, share=other, queue=backlog),
        scheduler="wrr",
        maxpkt="1500B",
    )
    names = ["EF", "CS1", "CS2", "CS3", "BE"]
    out = dsim.replay(queue, [{"time": 0, "size": 1500, "dscp": d} for d in names * 1500], rate="1.5Mbps")
    first = out.sort_values("depart_ns").head(2000)["dscp_in"].value_counts()
    per_visit = {d: ef.ns2_visit_bytes(int((share if d == "EF" else other) * 7500)) for d in names}
    assert (per_visit["EF"], per_visit["BE"]) == (2317, 1312.5)
    round_bytes = sum(per_visit.values())
    for d in names:
        assert abs(first[d] - 2000 * per_visit[d] / round_bytes) < 1, (d, first[d])


def test_mean_packet_and_wrr_weights() -> None:
    flows = [(56_000, 1500)] * 4 + [(56_000, 160)] * 4
    s = ef.mean_packet_bytes(flows)
    # bytes/s 4 x 7000 x 2 = 56000; packets/s 4 x (7000/1500 + 7000/160) = 193.67 -> 289.2 B
    assert s == pytest.approx(56000 / (4 * (7000 / 1500 + 7000 / 160)))
    for ratio in (1.03, 1.3, 1.5, 2.0, 3.0):
        share = ef.ef_share(ratio)
        w_e, w_o, achieved = ef.wrr_weights(share, 5, s)
        assert share <= achieved <= share * 1.01, (ratio, w_e, w_o, achieved)
        assert achieved == pytest.approx(ef.wrr_share(w_e, w_o, 5, s))


def test_scheduler_specs_validate_and_split_the_codepoints() -> None:
    s = ef.mean_packet_bytes([(56_000, 1500)] * 4 + [(56_000, 160)] * 4)
    assert ef.non_ef_codepoints(5) == ["CS1", "CS2", "CS3", "BE"]
    share = ef.ef_share(1.03)
    for spec in (ef.scheduler_spec("pq"), ef.scheduler_spec("wrr", queues=5, share=share), ef.scheduler_spec("drr", queues=8, share=share), ef.scheduler_spec("wrr-packets", queues=5, share=share, ef_mean_packet=s)):
        one_link(spec).validate()
    spec = ef.scheduler_spec("wrr", queues=3, share=share)
    assert spec["type"] == "drr"
    assert [c.get("dscp") for c in spec["classes"]] == [["EF"], ["CS1"], ["BE"]]
    assert spec["classes"][-1]["default"] is True
    with pytest.raises(ValueError, match="give the EF aggregate's mean packet size"):
        ef.scheduler_spec("wrr-packets", queues=5, share=share)
    with pytest.raises(ValueError, match="scheduler 'fifo': choose"):
        ef.scheduler_spec("fifo", queues=5, share=share)


def test_ef_sources_fill_450_kbps_with_both_sizes() -> None:
    # Two microflows, 160 B target: the target at 56 kbit/s and one 1500 B microflow with
    # the rest of 450 kbit/s (394 kbit/s), joining at R2.
    two = ef.ef_sources(2, 160)
    assert [(s.name, s.host, s.rate_bps, s.size) for s in two] == [("ef160", "S1", 56_000, 160), ("ef.1", "S2", 394_000, 1500)]
    # 24: the target and 23 x 394000/23 = 17130.43 -> 17130 bit/s, sizes alternating.
    many = ef.ef_sources(24, 1500)
    assert sum(s.rate_bps for s in many) == pytest.approx(450_000, abs=23)
    assert [s.size for s in many[:4]] == [1500, 160, 1500, 160]
    assert {s.host for s in many} == {"S1", "S2", "S3", "S4"}
    # Subscribed EF crossing each router hop of the 8-flow aggregate: the target and ef.4
    # from S1 (R1->R2), ef.1 and ef.5 join at R2, ef.2 and ef.6 at R3, ef.3 and ef.7 at R4.
    eight = ef.ef_sources(8, 1500)
    r = 56_286
    assert ef.ef_arrivals(eight) == [56_000 + r, 56_000 + 3 * r, 56_000 + 5 * r, 56_000 + 7 * r, 56_000 + 7 * r]
    with pytest.raises(ValueError, match="at least 2 microflows"):
        ef.ef_sources(1, 1500)


def test_configure_sets_every_hop_and_splits_the_background() -> None:
    base = packaged("figure6.toml")
    sources = ef.ef_sources(8, 160)
    sc = ef.configure(base, sources, "wrr", queues=5, ratio=1.03)
    sc.validate()
    hops = ef.port_links(sc)
    assert [(sc.data["link"][i]["from"], sc.data["link"][i]["to"]) for i in hops] == [("R1", "R2"), ("R2", "R3"), ("R3", "R4"), ("R4", "R5"), ("R5", "D")]
    # The bottleneck: share 1.03 x 450002 / 1.5e6 = 0.30900 -> ns-2 allotments 2318 / 1295,
    # served as 2318 / 1313 B per visit.
    bottleneck = sc.data["link"][hops[-1]]["forward"]["queue"]
    assert [c["quantum"] for c in bottleneck["classes"]] == ["2318B", "1313B", "1313B", "1313B", "1313B"]
    # R1->R2 carries 112 286 bit/s of EF on 45 Mbit/s: allotment ceil(0.00257 x 7500) = 20 B,
    # served as 750 B (a packet every second visit).
    assert sc.data["link"][hops[0]]["forward"]["queue"]["classes"][0]["quantum"] == "750B"
    flows = sc.data["flow"]
    assert [f["name"] for f in flows if f.get("dscp") == "EF"] == ["ef160"] + [f"ef.{k}" for k in range(1, 8)]
    background = [f for f in flows if f.get("dscp") != "EF"]
    assert len(background) == 21
    assert {f["dscp"] for f in background} == {"CS1", "CS2", "CS3", "BE"}
    # Every non-EF queue holds at least one long-lived FTP.
    assert {f["dscp"] for f in background if f["app"]["type"] == "ftp"} == {"CS1", "CS2", "CS3", "BE"}
    # The "share" reading: every hop gets the bottleneck's 30.9 %.
    shared = ef.configure(base, sources, "drr", queues=5, ratio=1.03, allocation="share")
    assert {shared.data["link"][i]["forward"]["queue"]["classes"][0]["quantum"] for i in hops} == {"2318B"}
    pq = ef.configure(base, sources, "pq")
    assert {f["dscp"] for f in pq.data["flow"] if f.get("dscp") != "EF"} == {"BE"}
    with pytest.raises(ValueError, match="allocation 'both'"):
        ef.configure(base, sources, "wrr", queues=5, ratio=1.03, allocation="both")


@pytest.mark.parametrize("bottleneck", ["1.5Mbit/s", "1500Kbps", "1500000bps", "187.5KB/s"])
def test_a_rate_in_any_spelling_the_scenario_accepts_gives_the_same_set_up(bottleneck: str) -> None:
    # The reproduction reads the link rates with the core's parser (dsim.units), so every
    # spelling of figure 6's 1.5 Mbit/s bottleneck (and of the 45 Mbit/s first hop) gives the
    # allocations of "1.5Mbps" on every hop: the same scenario, key for key.
    base = packaged("figure6.toml")
    hops = ef.port_links(base)
    assert (base.data["link"][hops[0]]["rate"], base.data["link"][hops[-1]]["rate"]) == ("45Mbps", "1.5Mbps")
    respelled = base.copy().set(f"link[{hops[0]}].rate", "45Mbit/s").set(f"link[{hops[-1]}].rate", bottleneck)
    sources = ef.ef_sources(8, 160)
    for kind, allocation in (("wrr", "ratio"), ("drr", "share"), ("wrr-packets", "ratio")):
        expected = ef.configure(base, sources, kind, queues=5, ratio=1.03, allocation=allocation)
        sc = ef.configure(respelled, sources, kind, queues=5, ratio=1.03, allocation=allocation)
        assert sc.canonical_toml() == expected.canonical_toml(), kind
    sc = ef.regulated(ef.configure(respelled, sources, "wrr", queues=5, ratio=1.03), 1.03)
    assert sc.canonical_toml() == ef.regulated(ef.configure(base, sources, "wrr", queues=5, ratio=1.03), 1.03).canonical_toml()
    # The allocation read the rate: the bottleneck's quanta of test_configure_sets_every_hop...
    assert [c["quantum"] for c in sc.data["link"][hops[-1]]["forward"]["queue"]["classes"]] == ["2318B", "1313B", "1313B", "1313B", "1313B"]
    vll = packaged("vll.toml")
    respelled_vll = vll.copy().set(f"link[{ef.port_links(vll)[-1]}].rate", bottleneck)
    assert ef.vll_scenario(respelled_vll, 60, 225).canonical_toml() == ef.vll_scenario(vll, 60, 225).canonical_toml()


def test_a_rate_the_scenario_refuses_is_refused_naming_its_key() -> None:
    base = packaged("figure6.toml")
    bottleneck = ef.port_links(base)[-1]
    sc = base.copy().set(f"link[{bottleneck}].rate", "1.5Mb")
    with pytest.raises(dsim.ScenarioError, match=rf'^link\[{bottleneck}\]\.rate = "1.5Mb": rate "1.5Mb" has an unknown unit "Mb"'):
        ef.configure(sc, ef.ef_sources(8, 160), "wrr", queues=5, ratio=1.03)


def test_vll_rows() -> None:
    # 20 % of 1.5 Mbit/s is three VLLs of 100 kbit/s; 40 % four of 150; 60 % four of 225.
    assert [ef.vll_count(r.link_pct_to_ef, r.subscribed_kbps * 1e3) for r in ef.TABLE4.itertuples()] == [3, 4, 4]
    with pytest.raises(ValueError, match="not a whole number"):
        ef.vll_count(25, 100e3)
    base = packaged("vll.toml")
    # The file is the 20 % row exactly as the experiment builds it.
    assert ef.vll_scenario(base, 20, 100).canonical_toml() == base.canonical_toml()
    sc = ef.vll_scenario(base, 60, 225)
    sc.validate()
    assert [f["name"] for f in sc.data["flow"][:8]] == ["vll1", "ded1", "vll2", "ded2", "vll3", "ded3", "vll4", "ded4"]
    assert {c["shaper"]["rate"] for c in sc.data["conditioner"]} == {"225kbps"}
    bottleneck = sc.data["link"][ef.port_links(sc)[-1]]["forward"]["queue"]
    # 900 kbit/s of 1.5 Mbit/s: 60 % of a 7500 B round = 4500 B; the others 750 B each.
    assert [c["quantum"] for c in bottleneck["classes"]] == ["4500B", "750B", "750B", "750B", "750B"]


def test_the_other_queues_turns_shrink_with_the_ratio() -> None:
    # 5 queues at 1.03: the others' ns-2 allotments of 1312.5 B per visit served as 1313 B
    # quanta, 4 x 1313 B at 1.5 Mbit/s; at 3.0 each is below half a packet: 750 B.
    assert ef.others_turns_ms(1.03) == pytest.approx(4 * 1313 * 8 / 1.5e6 * 1e3)
    assert ef.others_turns_ms(3.0) == pytest.approx(4 * 750 * 8 / 1.5e6 * 1e3)
    assert ef.others_turns_ms(1.03) > ef.others_turns_ms(1.5) > ef.others_turns_ms(3.0)


def test_jitter_measures_and_table_4() -> None:
    from types import SimpleNamespace

    import pandas as pd

    def result(rows: list[tuple[int, str, float, float]]) -> SimpleNamespace:
        flows = pd.DataFrame(rows, columns=["replication", "flow", "jitter_p50_pct", "jitter_p90_pct"]).assign(dscp="EF")
        return SimpleNamespace(flows=flows, drops=pd.DataFrame(), scenario=SimpleNamespace(data={"nodes": {"routers": ["R1"]}}))

    runs = {"PQ/1500": result([(1, "ef1500", 12.0, 30.0), (0, "ef1500", 10.0, 20.0), (0, "ef.1", 99.0, 99.0)]), "1.03/160": result([(0, "ef160", 90.0, 120.0)])}
    m = ef.jitter_measures(runs)
    # The target flow's percentiles, one value per replication in replication order.
    assert list(m["p50_1500/PQ"]) == [10.0, 12.0] and list(m["p90_1500/PQ"]) == [20.0, 30.0]
    assert list(m["p50_160/1.03"]) == [90.0] and m["EF drops"] == 0.0
    assert list(ef.TABLE4["vll_kbps"]) == [90, 143, 215]


def test_policer_file_polices_the_excess() -> None:
    sc = packaged("policer.toml").set("duration", "60s")
    res = dsim.run(sc, replications=1)
    f = res.flows.set_index("flow")
    # S1 shaped to its negotiated rate: nothing dropped.
    assert f.loc[["ef1500", "ef160"], "dropped_pkts"].sum() == 0
    # S2: 224 kbit/s against 112 negotiated: about half its packets are security drops.
    assert f.loc["excess", "drop_security_pkts"] == f.loc["excess", "dropped_pkts"] > 0
    assert f.loc["excess", "throughput_bps"] == pytest.approx(112e3, rel=0.02)
    # S3: no negotiated rate, everything dropped and counted.
    assert f.loc["unnegotiated", "delivered_pkts"] == 0
    assert f.loc["unnegotiated", "drop_security_pkts"] == f.loc["unnegotiated", "sent_pkts"] > 0
    assert ef.ef_network_drops(res) == 0
