"""ABE (draft-hurley-alternative-best-effort): the dsd() and tfrc() builders, their errors,
and the abe scenario files."""

from __future__ import annotations

from importlib import resources

import pytest

import dsim
from dsim import Scenario, ScenarioError, cbr, droptail, dsd, tfrc


def dumbbell(queue: dict, app: dict | None = None, dscp: int | None = dsim.ABE_GREEN_DSCP) -> Scenario:
    sc = Scenario(duration="5s", warmup="1s")
    sc.hosts("S", "D").routers("R1", "R2")
    sc.link("S", "R1", rate="10Mbps", delay="20ms")
    sc.link("R1", "R2", rate="1Mbps", delay="50ms", queue=queue)
    sc.link("R2", "D", rate="10Mbps", delay="1ms")
    sc.flow("blue", src="S", dst="D", app=cbr(rate="1.2Mbps", size="1000B"))
    sc.flow("green", src="S", dst="D", app=app or cbr(rate="100kbps", size="200B"), dscp=dscp)
    return sc


def test_dsd_builder_writes_the_schema():
    q = dsd("75KB", "10ms", g=0.5, control=True, red={"min_th": "20KB", "max_th": "60KB", "max_p": 0.1, "wq": 0.002})
    assert q == {
        "type": "dsd",
        "buffer": "75KB",
        "d": "10ms",
        "g": 0.5,
        "red": {"min_th": "20KB", "max_th": "60KB", "max_p": 0.1, "wq": 0.002},
        "control": {},
    }
    assert dsim.ABE_GREEN_DSCP == 3


def test_dsd_runs_and_reports_both_colours():
    res = dsim.run(dumbbell(dsd("75KB", "10ms")), replications=1)
    q = res.queues[res.queues["port"] == "R1->R2"]
    assert list(q["queue"]) == [0, 1]  # 0 blue, 1 green
    for cause in ("dsd_overflow", "dsd_red", "dsd_green_late", "dsd_green_early", "dsd_green_safety_net", "dsd_green_penalty"):
        assert f"drop_{cause}_pkts" in res.flows.columns
    assert "marks_pkts" in res.queues.columns
    flows = res.flows.set_index("flow")
    # Green waits at most d = 10 ms at the bottleneck: 71 ms of propagation, 1.9 ms of
    # transmissions, up to 10 ms of queueing and 0.8 ms behind a blue packet on R2 -> D.
    assert flows.loc["green", "delay_max_ms"] < 71 + 1.92 + 10 + 0.8 + 0.01
    assert flows.loc["blue", "delay_mean_ms"] > 300


def test_tfrc_source_runs_green_blue_or_mixed():
    for green in (0, 0.5, 1.0):
        res = dsim.run(dumbbell(dsd("75KB", "20ms"), app=tfrc("1000B", green=green), dscp=None), replications=1)
        row = res.flows.set_index("flow").loc["green"]
        assert row["transport"] == "tfrc"
        assert row["delivered_pkts"] > 0


@pytest.mark.parametrize(
    "queue,path,rule",
    [
        (dsd("75KB", "0ms"), "link[1].queue.d", "greater than 0s"),
        (dsd("0p", "10ms"), "link[1].queue.buffer", "buffer must be greater than 0"),
        (dsd("75KB", "10ms", green_dscp=2), "link[1].queue.green_dscp", "xxxx11 or xxxx01"),
        (dsd("75KB", "10ms", green_dscp=59), "link[1].queue.green_dscp", "below 0x38"),
        (dsd("75KB", "10ms", ecn=True), "link[1].queue.ecn", "add red"),
        (
            dsd("75KB", "10ms", red={"min_th": "5p", "max_th": "40KB", "max_p": 0.1, "wq": 0.002}),
            "link[1].queue.red.max_th",
            "same unit",
        ),
        (
            dsd("75KB", "10ms", red={"min_th": "40KB", "max_th": "30KB", "max_p": 0.1, "wq": 0.002}),
            "link[1].queue.red.max_th",
            "greater than min_th",
        ),
        (dsd("75KB", "10ms", red={"min_th": "20KB", "max_th": "60KB", "wq": 0}), "link[1].queue.red.wq", "(0, 1)"),
        (dsd("75KB", "10ms", red={"min_th": "20KB", "max_th": "80KB"}), "link[1].queue.red.max_th", "must not exceed"),
        (dsd("75KB", "10ms", control={"period": "0s"}), "link[1].queue.control.period", "greater than 0s"),
        (dsd("75KB", "10ms", control={"gain": 0}), "link[1].queue.control.gain", "greater than 0"),
        (dsd("75KB", "10ms", control={"max_penalty": 1}), "link[1].queue.control.max_penalty", "must lie in [0, 1)"),
        (dsd("75KB", "10ms", g=1.5), "link[1].queue.g", "in [0, 1]"),
    ],
)
def test_dsd_errors_name_key_and_rule(queue, path, rule):
    with pytest.raises(ScenarioError) as e:
        dumbbell(queue).validate()
    assert e.value.path == path
    assert rule in e.value.rule


@pytest.mark.parametrize(
    "queue,text",
    [
        ({**dsd("75KB", "10ms"), "dd": "1ms"}, "unknown field `dd`"),
        ({"type": "dsd", "buffer": "75KB"}, "missing field `d`"),
        (dsd("75KB", "10"), "has no unit"),
        (dsd("75KB", "10ms", control={"periodd": "1s"}), "unknown field `periodd`"),
        (dsd("75KB", "10ms", red={"min_th": "20KB", "max_th": "60KB", "w_q": 0.002}), "unknown field `w_q`"),
    ],
)
def test_dsd_schema_errors(queue, text):
    with pytest.raises(ScenarioError, match=text):
        dumbbell(queue).validate()


def test_tfrc_green_dscp_is_checked():
    with pytest.raises(ScenarioError) as e:
        dumbbell(droptail("75KB"), app=tfrc("1000B", green=1.0, green_dscp=46)).validate()
    assert e.value.path == "flow[1].app.green_dscp"
    with pytest.raises(ScenarioError) as e:
        dumbbell(droptail("75KB"), app=tfrc("1000B", green=2)).validate()
    assert e.value.path == "flow[1].app.green"


@pytest.mark.parametrize("name", ["abe.toml", "abe-flat.toml"])
def test_abe_scenario_files_validate(name):
    path = resources.files("dsim") / "scenarios" / "abe" / name
    sc = Scenario.from_toml(str(path))
    res = dsim.run(sc.copy().set("duration", "20s").set("warmup", "5s"), replications=1)
    f = res.flows
    green = f[f["flow"].str.startswith("green")]
    blue = f[f["flow"].str.startswith("blue")]
    assert len(green) == 4 and (green["transport"] == "udp").all() and (green["dscp"] == "3").all()
    assert len(blue) == 4 and (blue["transport"] == "tcp").all()
    # The persistent TCP connections fill the 1 Mbit/s bottleneck beside the green traffic.
    assert green["throughput_bps"].sum() > 60_000
    assert green["throughput_bps"].sum() + blue["throughput_bps"].sum() > 950_000


def test_droptail_overshoot_is_dummynets_byte_rule():
    # A 1 Mbit/s bottleneck, 3000 B of buffer, a 1.2 Mbit/s CBR of 1000 B packets and a
    # 100 kbit/s CBR of 200 B datagrams. With the default rule the datagrams slip into the
    # last free bytes a 1000 B packet cannot use; with overshoot both are refused alike
    # (only when more than 3000 B wait), so the small ones lose as often as the big ones.
    def loss(overshoot):
        res = dsim.run(dumbbell(droptail("3000B", overshoot=overshoot), dscp=None).set("duration", "20s"), replications=1)
        f = res.flows.set_index("flow")
        return (f["dropped_pkts"] / f["sent_pkts"]).to_dict()

    fit, over = loss(None), loss(True)
    assert fit["green"] < 0.2 * fit["blue"]
    assert over["green"] > 0.5 * over["blue"]
    assert droptail("75KB", overshoot=True) == {"type": "droptail", "limit": "75KB", "overshoot": True}
    with pytest.raises(ScenarioError) as e:
        dumbbell(droptail("50p", overshoot=True)).validate()
    assert e.value.path == "link[1].queue.overshoot"
    assert "in bytes" in e.value.rule
    with pytest.raises(ScenarioError) as e:
        dumbbell(dsd("50p", "10ms", overshoot=True)).validate()
    assert e.value.path == "link[1].queue.overshoot"


def test_control_loop_state_in_the_results():
    sc = dumbbell(dsd("75KB", "20ms", control=True), app=tfrc("1000B", green=1.0), dscp=None).set("duration", "30s")
    res = dsim.run(sc, replications=2)
    q = res.queues
    dsd_rows = q[q["port"] == "R1->R2"]
    assert dsd_rows["dsd_g_mean"].between(0, 1).all() and dsd_rows["dsd_penalty_mean"].between(0, 0.5).all()
    assert q[q["port"] == "S->R1"]["dsd_g"].isna().all()
    c = res.dsd_control
    assert list(c.columns) == ["replication", "port", "time_s", "g", "penalty", "ratio", "loss_blue", "loss_green", "wait_blue_ms", "wait_green_ms"]
    fwd = c[c["port"] == "R1->R2"]
    assert set(fwd["replication"]) == {0, 1}
    assert len(fwd) >= 2 * 28  # one row per 1 s period of a 30 s run, per replication
    assert fwd["g"].between(0, 1).all()
    # Without a loop: the configured g, no penalty, an empty dsd_control table.
    res = dsim.run(dumbbell(dsd("75KB", "20ms", g=0.3)).set("duration", "5s"), replications=1)
    assert res.dsd_control.empty
    rows = res.queues[res.queues["port"] == "R1->R2"]
    assert (rows["dsd_g_mean"] == 0.3).all() and (rows["dsd_penalty_mean"] == 0).all()
