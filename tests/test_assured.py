"""Seed 002 (draft-ibanez-diffserv-assured-eval-00): the scenario files say what the document
says (the family's verdicts: tests/test_reproduce.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dsim
from dsim.reproduce import assured_topology as topo
from dsim.units import duration_ns

AS_DIR = Path(topo.SCENARIO_DIR)


def load(name: str) -> dsim.Scenario:
    return dsim.Scenario.from_toml(AS_DIR / name)


def us(delay: str) -> float:
    """A delay string of the files ("32200us", "5ms") in microseconds."""
    return duration_ns(delay, "delay") / 1e3


def link(sc: dsim.Scenario, a: str, b: str) -> dict:
    [entry] = [x for x in sc.data["link"] if (x["from"], x["to"]) == (a, b)]
    return entry


def conditioners(sc: dsim.Scenario) -> dict[str, dict]:
    return {c["name"]: c for c in sc.data.get("conditioner", [])}


def rio_params(queue: dict) -> tuple[tuple, tuple]:
    """(OUT, IN) as (min_th, max_th, max_p) of a two-precedence coupled MRED queue."""
    assert queue["type"] == "mred" and queue["mode"] == "coupled" and queue["wq"] == 0.002
    inp, outp = queue["precedence"]
    assert inp["dscp"] == ["AF11"] and "dscp" not in outp  # IN = AF11, everything else OUT
    as_tuple = lambda p: (p["min_th"], p["max_th"], p["max_p"])  # noqa: E731
    return as_tuple(outp), as_tuple(inp)


def test_committed_files_are_what_the_generator_writes() -> None:
    for name, text in topo.files().items():
        assert (AS_DIR / name).read_text() == text, f"{name} is stale: run python -m dsim.reproduce.assured_topology"


def check_dumbbell(sc: dsim.Scenario, n: int, bottleneck: str) -> list[float]:
    """Figure 1 with n connections: h_i -> h_{i+n}, 10 Mbit/s access links, uncongested
    reverse path, ns-2-like SACK TCP with 576 B datagrams, starts in the first second.
    Returns the connections' round-trip propagation times in ms."""
    flows = sc.data["flow"]
    assert len(flows) == n
    rtts = []
    bn = link(sc, "r0", "r1")
    assert bn["rate"] == bottleneck and bn["delay"] == "5ms"
    assert bn["queue"] == {"type": "droptail", "limit": "5000p"}  # reverse (ACK) direction
    for i, f in enumerate(flows):
        assert (f["src"], f["dst"]) == (f"h{i}", f"h{i + n}")
        assert f["start"] == {"uniform": ["0s", "1s"]}
        if f["app"]["type"] == "ftp":
            assert f["app"] == {"type": "ftp"}
            tcp = f["tcp"]
            assert tcp["variant"] == "sack" and tcp["delayed_ack"] is False and tcp["counting"] == "packets"
            assert int(tcp["mss"].rstrip("B")) + 40 == 576
        up, down = link(sc, f"h{i}", "r0"), link(sc, "r1", f"h{i + n}")
        for access in (up, down):
            assert access["rate"] == "10Mbps" and access["queue"] == {"type": "droptail", "limit": "5000p"}
        rtts.append(2 * (us(up["delay"]) + us(bn["delay"]) + us(down["delay"])) / 1e3)
    return rtts


def test_rtt_file_is_section_2_2() -> None:
    sc = load("rtt.toml")
    rtts = check_dumbbell(sc, 50, "50Mbps")
    assert all(50 <= r <= 150 for r in rtts) and min(rtts) < 60 and max(rtts) > 140
    assert rtts == pytest.approx(topo.rtts_ms(50), abs=1e-6)
    out, in_ = rio_params(link(sc, "r0", "r1")["forward"]["queue"])
    assert out == ("420p", "840p", 0.05) and in_ == ("500p", "840p", 0.02)  # labels corrected
    assert link(sc, "r0", "r1")["forward"]["queue"]["limit"] == "1050p"
    conds = conditioners(sc)
    for i in range(25):
        p = conds.pop(f"profiler-h{i}")
        assert p["at"] == f"h{i}" and p["meter"] == {"type": "token_bucket", "rate": "1Mbps", "depth": "20KB"}
        assert p["green"] == {"mark": "AF11"}
    pol = conds.pop("policer")
    assert (pol["at"], pol["side"], pol["interface"]) == ("r0", "egress", "r1")
    assert pol["match"] == {"dscp": ["AF11"]} and pol["red"] == {"demote": "BE"}
    assert pol["meter"] == {"type": "token_bucket", "rate": "25Mbps", "depth": "25KB"}  # 25 x 1 Mbit/s
    assert conds == {}
    assert sc.data["replications"] == 5  # "Simulations were run 5 times"


@pytest.mark.parametrize("k", [0, 10, 40, 50])
def test_assured_hosts_sets_profilers_and_the_policer_to_the_sum(k: int) -> None:
    sc = topo.assured_hosts(load("rtt.toml"), k)
    conds = conditioners(sc)
    assert sorted(n for n in conds if n.startswith("profiler-")) == sorted(f"profiler-h{i}" for i in range(k))
    if k:
        assert conds["policer"]["meter"]["rate"] == f"{k}Mbps"
    else:
        assert "policer" not in conds
    sc.validate()


def test_tsw_variant_meters_at_the_target() -> None:
    sc = topo.assured_hosts(load("rtt.toml"), 25, meter="tsw")
    conds = conditioners(sc)
    assert conds["profiler-h3"]["meter"] == {"type": "tsw", "target": "1Mbps", "window": "1s"}
    assert conds["policer"]["meter"]["type"] == "token_bucket"  # the policer stays a token bucket
    sc.validate()


def test_targets_file_is_section_3_2() -> None:
    sc = load("targets.toml")
    rtts = check_dumbbell(sc, 40, "20Mbps")
    assert rtts == pytest.approx([100.0] * 40)
    out, in_ = rio_params(link(sc, "r0", "r1")["forward"]["queue"])
    assert out == ("347p", "694p", 0.05) and in_ == ("390p", "694p", 0.02)
    conds = conditioners(sc)
    expected = ["2Mbps"] * 4 + ["1Mbps"] * 4 + ["500kbps"] * 4 + ["200kbps"] * 4 + ["100kbps"] * 4
    assert [conds[f"profiler-h{i}"]["meter"]["rate"] for i in range(20)] == expected
    assert not any(f"profiler-h{i}" in conds for i in range(20, 40))
    # 76 % of the 20 Mbit/s link is subscribed: the policer runs at 15.2 Mbit/s.
    assert conds["policer"]["meter"]["rate"] == "15200kbps"
    assert sc.data["replications"] == 10  # "averaged over 10 runs"


def test_cbr_file_is_section_3_3() -> None:
    sc = load("cbr.toml")
    check_dumbbell(sc, 20, "20Mbps")
    out, in_ = rio_params(link(sc, "r0", "r1")["forward"]["queue"])
    assert out == ("173p", "347p", 0.05) and in_ == ("195p", "347p", 0.02)
    cbr = sc.data["flow"][topo.CBR_CONNECTION]
    assert cbr["app"]["type"] == "cbr" and cbr["app"]["size"] == "576B" and "tcp" not in cbr
    assert sum(f["app"]["type"] == "ftp" for f in sc.data["flow"]) == 19
    conds = conditioners(sc)
    assert sorted(n for n in conds if n.startswith("profiler-")) == sorted(f"profiler-h{i}" for i in range(10))
    assert conds["policer"]["meter"]["rate"] == "10Mbps"
    for target, total in (("4Mbps", "14Mbps"), ("8Mbps", "18Mbps")):  # 70 % and 90 % subscribed
        v = conditioners(topo.cbr_source(sc, rate="6Mbps", target=target))
        assert v["profiler-h19"]["meter"]["rate"] == target and v["policer"]["meter"]["rate"] == total
    # A target in any spelling the scenario accepts raises the policer by the same rate.
    for target in ("4Mbit/s", "4000Kbps", "500KB/s"):
        assert conditioners(topo.cbr_source(sc, rate="6Mbps", target=target))["policer"]["meter"]["rate"] == "14Mbps"
    with pytest.raises(dsim.ScenarioError, match='target = "4Mb": rate "4Mb" has an unknown unit "Mb"'):
        topo.cbr_source(sc, rate="6Mbps", target="4Mb")


def test_merge_file_is_section_3_5() -> None:
    sc = load("merge.toml")
    assert len(sc.data["flow"]) == 8
    for f in sc.data["flow"]:
        assert f["tcp"]["mss"] == "1460B"  # 1500 B packets including headers
    t1 = link(sc, "r6", "r7")
    assert t1["rate"] == "1.5Mbps" and t1["forward"]["queue"]["limit"] == "24p"
    out, in_ = rio_params(t1["forward"]["queue"])
    assert out == ("4p", "9p", 0.05) and in_ == ("5p", "9p", 0.02)
    conds = conditioners(sc)
    for i in range(8):
        assert conds[f"profiler-h{i}"]["meter"] == {"type": "token_bucket", "rate": "100kbps", "depth": "6000B"}
        # Each host hangs off a first-level router whose policer allows two hosts' targets.
        link(sc, f"h{i}", f"r{i // 2}")
    rates = {f"r{k}": conds[f"policer-r{k}"]["meter"]["rate"] for k in range(7)}
    assert rates == {"r0": "200kbps", "r1": "200kbps", "r2": "200kbps", "r3": "200kbps", "r4": "400kbps", "r5": "400kbps", "r6": "800kbps"}
    for k in range(7):
        pol = conds[f"policer-r{k}"]
        assert pol["meter"]["depth"] == "9000B" and pol["interface"] == topo.MERGE_TREE[f"r{k}"]
        link(sc, f"r{k}", pol["interface"])  # the policer meters the link toward its parent
