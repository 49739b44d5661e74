"""Assured Forwarding from Python: the builder helpers, the result tables, and every
validation error of the RED / MRED queue specs, conditioners and codepoint names."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

import dsim
from dsim import Scenario, ScenarioError


def base() -> Scenario:
    """A -> R -> B; the R -> B direction is 10 Mbit/s with RIO; A profiles its flow."""
    sc = Scenario(duration="5s", warmup="1s", name="af")
    sc.hosts("A", "B").routers("R")
    sc.link("A", "R", rate="100Mbps", delay="1ms")
    sc.link(
        "R",
        "B",
        rate="10Mbps",
        delay="5ms",
        queue=dsim.rio("100p", out=("10p", "30p", 0.05), in_=("40p", "70p", 0.02), in_dscp=["AF11"]),
    )
    sc.flow("u", src="A", dst="B", app=dsim.cbr(rate="12Mbps", size="1000B", spacing_variation="10%"))
    sc.conditioner(
        "prof",
        at="A",
        per_flow=True,
        match=dsim.match(flow=["u"]),
        meter=dsim.token_bucket(rate="4Mbps", depth="10KB"),
        green=dsim.mark("AF11"),
        red=dsim.mark("AF12"),
    )
    return sc


def test_builder_round_trips_and_runs() -> None:
    sc = base()
    text = sc.to_toml()
    assert "[[conditioner]]" in text and 'type = "mred"' in text
    again = Scenario.from_toml(text)
    assert again.hash() == sc.hash()
    res = dsim.run(sc, seed=3)
    f = res.flows.set_index("flow").loc["u"]
    # 4 Mbit/s of IN within a 10 Mbit/s link: IN is protected, OUT takes the losses.
    assert f["green_sent_pkts"] > 0 and f["red_sent_pkts"] > 0
    assert f["green_dropped_pkts"] == 0
    assert f["red_dropped_pkts"] > 0
    assert f["drop_early_pkts"] + f["drop_forced_pkts"] == f["dropped_pkts"] - f["drop_overflow_pkts"]
    cond = res.conditioners.set_index(["conditioner", "color"])
    assert cond.loc[("prof/u", "green"), "pkts"] == f["green_sent_pkts"]
    assert cond.loc[("prof/u", "green"), "remarked_pkts"] == f["green_sent_pkts"]
    q = res.queues[res.queues.port == "R->B"].set_index("precedence")
    assert list(q.index) == [0, 1]
    assert q.loc[0, "dropped_pkts"] == 0
    assert q.loc[1, "drop_early_pkts"] + q.loc[1, "drop_forced_pkts"] > 0
    assert "marks_pkts" in res.queues.columns
    assert res.queue_series.empty and list(res.queue_series.columns)[:2] == ["replication", "port"]
    s = res.summary("conditioners")
    assert {"pkts", "pkts_ci"} <= set(s.columns)


def test_series_and_user_codepoints() -> None:
    sc = Scenario(duration="2s")
    sc.hosts("A", "B").routers("R")
    sc.dscp("IN", 10).dscp("OUT", 12)
    sc.link("A", "R", rate="100Mbps", delay="1ms")
    q = dsim.mred("100p", [dsim.precedence("40p", "70p", 0.02, dscp=["IN"]), dsim.precedence("10p", "30p", 0.05, dscp=["OUT"])], series="10ms")
    sc.link("R", "B", rate="10Mbps", delay="1ms", queue=q)
    sc.flow("u", src="A", dst="B", dscp="IN", app=dsim.cbr(rate="12Mbps", size="1000B"))
    sc.conditioner("p", at="A", meter=dsim.token_bucket("4Mbps", "10KB"), red=dsim.demote("OUT"))
    res = dsim.run(sc)
    series = res.queue_series
    assert set(series.precedence) == {0, 1}
    assert len(series) == 2 * 200
    assert (series.unit == "pkts").all()
    cond = res.conditioners.set_index("color")
    assert cond.loc["red", "demoted_pkts"] == cond.loc["red", "pkts"] > 0
    # The names are read as numbers: canonical TOML writes the standard names of 10, 12.
    assert 'dscp = "AF11"' in sc.canonical_toml()


def test_ef_policer_and_shaper_from_python() -> None:
    sc = Scenario(duration="4s")
    sc.hosts("A", "B").routers("R")
    sc.link("A", "R", rate="100Mbps", delay="1ms")
    sc.link("R", "B", rate="100Mbps", delay="1ms")
    sc.flow("ef", src="A", dst="B", dscp="EF", app=dsim.cbr(rate="2Mbps", size="500B"))
    sc.conditioner("edge", at="R", side="ingress", ef_policer=dsim.ef_policer())
    res = dsim.run(sc)
    f = res.flows.iloc[0]
    assert f["delivered_pkts"] == 0 and f["drop_security_pkts"] == f["sent_pkts"]
    sc2 = sc.copy()
    sc2.set("conditioner[0].ef_policer", dsim.ef_policer("1Mbps", "1000B"))
    sc2.conditioner("vll", at="A", shaper=dsim.tb_shaper("1Mbps", "500B", "10p"))
    f2 = dsim.run(sc2).flows.iloc[0]
    assert f2["drop_security_pkts"] == 0 and f2["drop_shaper_overflow_pkts"] > 0


# -- validation ------------------------------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def _red(d: dict[str, Any], **kw: Any) -> None:
    d["link"][1]["queue"] = {**dsim.red("100p", "5p", "15p"), **kw}


def _prec(d: dict[str, Any], k: int, **kw: Any) -> None:
    d["link"][1]["queue"]["precedence"][k].update(kw)


def _cond(d: dict[str, Any], **kw: Any) -> None:
    c = d["conditioner"][0]
    for key, v in kw.items():
        if v is None:
            c.pop(key, None)
        else:
            c[key] = v


CASES: list[tuple[str, Edit, str, str]] = [
    # RED
    ("red-order", lambda d: _red(d, min_th="15p", max_th="15p"), "link[1].queue.max_th", "greater than min_th"),
    ("red-limit", lambda d: _red(d, max_th="150p"), "link[1].queue.max_th", "must not exceed the queue limit"),
    ("red-units", lambda d: _red(d, max_th="15KB"), "link[1].queue.max_th", "same unit"),
    ("red-max-p-zero", lambda d: _red(d, max_p=0.0), "link[1].queue.max_p", "max_p must lie in (0, 1]"),
    ("red-max-p-big", lambda d: _red(d, max_p=1.5), "link[1].queue.max_p", "max_p must lie in (0, 1]"),
    ("red-wq-one", lambda d: _red(d, wq=1.0), "link[1].queue.wq", "(0, 1)"),
    ("red-wq-zero", lambda d: _red(d, wq=0), "link[1].queue.wq", "(0, 1)"),
    ("red-mean", lambda d: _red(d, mean_pkt_size="0B"), "link[1].queue.mean_pkt_size", "mean_pkt_size must lie in [1B, 65535B]"),
    ("red-series", lambda d: _red(d, series="0s"), "link[1].queue.series", "series must be greater than 0"),
    ("red-limit-zero", lambda d: _red(d, limit="0p"), "link[1].queue.limit", "limit must be greater than 0"),
    ("red-unknown-key", lambda d: _red(d, maxp=0.1), "link[1].queue.maxp", "unknown field"),
    ("red-no-unit", lambda d: _red(d, min_th=5), "link[1].queue.min_th", "5 has no unit"),
    # MRED
    ("mred-empty", lambda d: d["link"][1]["queue"].update(precedence=[]), "link[1].queue.precedence", "precedence must not be empty"),
    ("mred-dup-dscp", lambda d: _prec(d, 1, dscp=["AF12", "AF11"]), "link[1].queue.precedence[1].dscp[1]", "already belongs to precedence[0]"),
    ("mred-mixed-units", lambda d: _prec(d, 1, min_th="10KB", max_th="30KB"), "link[1].queue.precedence[1].min_th", "same unit"),
    ("mred-order", lambda d: _prec(d, 0, min_th="80p"), "link[1].queue.precedence[0].max_th", "greater than min_th"),
    ("mred-mode", lambda d: d["link"][1]["queue"].update(mode="rio"), "link[1].queue.mode", "unknown variant `rio`"),
    # meters
    ("tb-depth", lambda d: _cond(d, meter=dsim.token_bucket("1Mbps", "0B")), "conditioner[0].meter.depth", "greater than 0B"),
    ("srtcm-both-zero", lambda d: _cond(d, meter=dsim.srtcm("1Mbps", "0B", "0B")), "conditioner[0].meter.cbs", "RFC 2697"),
    ("trtcm-pir", lambda d: _cond(d, meter=dsim.trtcm("2Mbps", "3KB", "1Mbps", "6KB")), "conditioner[0].meter.pir", "equal to or greater than the CIR"),
    ("trtcm-cbs", lambda d: _cond(d, meter=dsim.trtcm("1Mbps", "0B", "2Mbps", "6KB")), "conditioner[0].meter.cbs", "greater than 0"),
    ("trtcm-pbs", lambda d: _cond(d, meter=dsim.trtcm("1Mbps", "3KB", "2Mbps", "0B")), "conditioner[0].meter.pbs", "greater than 0"),
    ("tsw-window", lambda d: _cond(d, meter=dsim.tsw("1Mbps", "0s")), "conditioner[0].meter.window", "greater than 0s"),
    ("tsw-target", lambda d: _cond(d, meter=dsim.tsw("0Mbps", "1s")), "conditioner[0].meter.target", "greater than 0"),
    ("tsw3-peak", lambda d: _cond(d, meter=dsim.tsw3("2Mbps", "1Mbps", "1s")), "conditioner[0].meter.peak", "at least the committed"),
    ("tsw-pout", lambda d: _cond(d, meter=dsim.tsw("1Mbps", "1s", pout="avg")), "conditioner[0].meter.pout", "unknown variant `avg`"),
    ("meter-type", lambda d: _cond(d, meter={"type": "leaky", "rate": "1Mbps"}), "conditioner[0].meter.type", "unknown type `leaky`"),
    ("meter-key", lambda d: _cond(d, meter={**dsim.token_bucket("1Mbps", "1KB"), "burst": "1KB"}), "conditioner[0].meter.burst", "unknown field"),
    # actions
    ("yellow-two-colour", lambda d: _cond(d, yellow="drop"), "conditioner[0].yellow", "never colours a packet yellow"),
    ("action-word", lambda d: _cond(d, red="drp"), "conditioner[0].red", "is not an action"),
    ("action-key", lambda d: _cond(d, red={"remark": "AF12"}), "conditioner[0].red", "unknown action"),
    ("action-dscp", lambda d: _cond(d, red={"mark": "AF52"}), "conditioner[0].red.mark", "not an AF codepoint"),
    ("actions-without-meter", lambda d: _cond(d, meter=None, shaper=dsim.tb_shaper("1Mbps", "1500B", "10p")), "conditioner[0].green", "need a meter"),
    ("nothing", lambda d: _cond(d, meter=None, green=None, red=None), "conditioner[0]", "needs a meter, a shaper, or an ef_policer"),
    # shaper
    ("shaper-rate", lambda d: _cond(d, meter=None, green=None, red=None, shaper=dsim.tb_shaper("0bps", "1500B", "10p")), "conditioner[0].shaper.rate", "greater than 0"),
    ("shaper-depth", lambda d: _cond(d, meter=None, green=None, red=None, shaper=dsim.tb_shaper("1Mbps", "0B", "10p")), "conditioner[0].shaper.depth", "greater than 0B"),
    ("shaper-limit", lambda d: _cond(d, meter=None, green=None, red=None, shaper=dsim.tb_shaper("1Mbps", "1500B", "0p")), "conditioner[0].shaper.limit", "greater than 0"),
    # EF policer
    ("ef-burst-without-rate", lambda d: _cond(d, meter=None, green=None, red=None, ef_policer=dsim.ef_policer(burst="1500B")), "conditioner[0].ef_policer.burst", "RFC 2598 section 3"),
    ("ef-rate-without-burst", lambda d: _cond(d, meter=None, green=None, red=None, ef_policer=dsim.ef_policer("1Mbps")), "conditioner[0].ef_policer.burst", "at least one packet"),
    ("ef-with-meter", lambda d: _cond(d, green=None, red=None, ef_policer=dsim.ef_policer()), "conditioner[0].meter", "takes no meter or shaper"),
    ("ef-with-actions", lambda d: _cond(d, meter=None, red=None, ef_policer=dsim.ef_policer()), "conditioner[0].green", "actions are fixed"),
    # attachment and matching
    ("at-unknown", lambda d: _cond(d, at="Z"), "conditioner[0].at", "no node has this name"),
    ("host-ingress", lambda d: _cond(d, side="ingress"), "conditioner[0].side", "use side = \"egress\""),
    ("side-word", lambda d: _cond(d, side="inbound"), "conditioner[0].side", "unknown variant"),
    ("interface-not-linked", lambda d: _cond(d, interface="B"), "conditioner[0].interface", "A has no link to B"),
    ("match-flow", lambda d: _cond(d, match={"flow": ["nope"]}), "conditioner[0].match.flow[0]", "no flow"),
    ("match-src", lambda d: _cond(d, match={"src": ["Q"]}), "conditioner[0].match.src[0]", "no node has this name"),
    ("match-dscp-twice", lambda d: _cond(d, match={"dscp": ["AF11", "AF11"]}), "conditioner[0].match.dscp[1]", "listed twice"),
    ("match-direction", lambda d: _cond(d, match={"direction": "up"}), "conditioner[0].match.direction", "unknown variant"),
    ("per-flow-nothing", lambda d: _cond(d, match={"src": ["B"]}), "conditioner[0].per_flow", "no flow can match"),
    ("name-twice", lambda d: d["conditioner"].append(copy.deepcopy(d["conditioner"][0])), "conditioner[1].name", "already exists"),
    ("name-slash", lambda d: _cond(d, name="a/b"), "conditioner[0].name", "without spaces or '/'"),
    ("cond-unknown-key", lambda d: _cond(d, colour="green"), "conditioner[0].colour", "unknown field"),
    # codepoint names
    ("dscp-standard-name", lambda d: d.update(dscp={"EF": 3}), "dscp.EF", "standard codepoint name"),
    ("dscp-range", lambda d: d.update(dscp={"GOLD": 64}), "dscp.GOLD", "0-63"),
    ("dscp-name-chars", lambda d: d.update(dscp={"1X": 3}), "dscp.1X", "starts with a letter"),
    ("dscp-undefined", lambda d: d["flow"][0].update(dscp="GOLD"), "flow[0].dscp", "not a DSCP"),
]


@pytest.mark.parametrize("edit,path,rule", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation_errors(edit: Edit, path: str, rule: str, refused) -> None:
    d = base().to_dict()
    edit(d)
    refused(d, path, rule)


def test_the_base_scenario_is_valid() -> None:
    base().validate()


def test_error_in_a_file_names_the_line(tmp_path: Any) -> None:
    text = base().to_toml().replace('depth = "10KB"', 'depth = "0B"')
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(path)
    e = info.value
    assert e.path == "conditioner[0].meter.depth"
    assert e.line == next(i + 1 for i, line in enumerate(text.splitlines()) if 'depth = "0B"' in line)
    assert str(path) in str(e)


def test_shipped_example_runs_and_rio_favours_the_profiled_flow() -> None:
    from importlib import resources

    path = resources.files("dsim") / "scenarios" / "af" / "profiler-policer-rio.toml"
    res = dsim.run(Scenario.from_toml(str(path)), replications=1)
    f = res.flows.set_index("flow")
    # 12 Mbit/s into 10: RIO drops OUT packets only, so the AS flow keeps its 4 Mbit/s of
    # IN plus a share of the rest (about 5.5), the unprofiled one about 4.5.
    assert f.loc["as", "throughput_bps"] > 5.2e6 and f.loc["be", "throughput_bps"] < 4.8e6
    assert f.loc["as", "green_dropped_pkts"] <= 0.001 * f.loc["as", "green_sent_pkts"]
    c = res.conditioners.set_index(["conditioner", "color"])
    assert c.loc[("policer", "green"), "pkts"] > 0
