"""Rate adaptive shapers (RFC 2963) from Python: the builder helpers, every validation
error of the RAS keys, the shipped LAN-interconnection scenario, and the quick runs of the
`ras` reproductions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

import dsim
from dsim import Scenario
from dsim.reproduce import registry, run_experiments
from dsim.reproduce import ras


def base(shaper: dict[str, Any] | None = None, meter: dict[str, Any] | None = None) -> Scenario:
    """A -> R -> B; R conditions what it sends to B: a trRAS in front of a trTCM."""
    sc = Scenario(duration="4s", warmup="1s", name="ras")
    sc.hosts("A", "B").routers("R")
    sc.link("A", "R", rate="100Mbps", delay="1ms")
    sc.link("R", "B", rate="10Mbps", delay="5ms")
    sc.flow("u", src="A", dst="B", app=dsim.cbr(rate="3Mbps", size="1500B", spacing_variation="50%"))
    sc.conditioner(
        "c",
        at="R",
        interface="B",
        shaper=shaper or dsim.trras("1Mbps", "2Mbps", cir_th="3KB", pir_th="6KB", mir_th="12KB", buffer="64KB", k="100ms"),
        meter=meter or dsim.trtcm("1Mbps", "3KB", "2Mbps", "6KB"),
        green=dsim.mark("AF11"),
        yellow=dsim.mark("AF12"),
        red=dsim.mark("AF13"),
    )
    return sc


def test_helpers_write_the_schema() -> None:
    assert dsim.srras("1Mbps", cir_th="3KB", mir_th="6KB", buffer="10KB", k="50ms") == {
        "type": "srras",
        "cir": "1Mbps",
        "cir_th": "3KB",
        "mir_th": "6KB",
        "buffer": "10KB",
        "k": "50ms",
    }
    g = dsim.trras("1Mbps", "2Mbps", cir_th="1KB", pir_th="2KB", mir_th="3KB", buffer="4KB", k="1s", mir="5Mbps", green=True)
    assert g["type"] == "g_trras" and g["mir"] == "5Mbps" and g["pir_th"] == "2KB"
    assert dsim.srras("1Mbps", cir_th="1KB", mir_th="1KB", buffer="1KB", k="1s", green=True)["type"] == "g_srras"


def test_shaper_runs_and_is_counted() -> None:
    sc = base()
    again = Scenario.from_toml(sc.to_toml())
    assert again.hash() == sc.hash()
    res = dsim.run(sc, seed=2)
    cond = res.conditioners.set_index("color")
    sh = cond.loc["shaper"]
    assert sh["pkts"] > 0 and sh["dropped_pkts"] == 0 and sh["mean_wait_ms"] > 0
    # Everything released was metered (the window edges aside).
    metered = cond.loc[["green", "yellow", "red"], "pkts"].sum()
    assert abs(metered - sh["passed_pkts"]) <= 2


def test_green_ras_waits_less_with_large_buckets() -> None:
    # With CBS 100 KB the trTCM nearly always holds a packet's tokens: the G-trRAS releases
    # at T2 = now, the trRAS waits for its spacing.
    big = dsim.trtcm("1Mbps", "100KB", "2Mbps", "200KB")
    shaper = dict(cir_th="3KB", pir_th="6KB", mir_th="12KB", buffer="64KB", k="100ms")
    tr = dsim.run(base(dsim.trras("1Mbps", "2Mbps", **shaper), big), seed=1).conditioners
    g = dsim.run(base(dsim.trras("1Mbps", "2Mbps", green=True, **shaper), big), seed=1).conditioners
    wait = lambda c: float(c.set_index("color").loc["shaper", "mean_wait_ms"])  # noqa: E731
    assert wait(g) < 0.5 * wait(tr)


Edit = Callable[[dict[str, Any]], None]


def _shaper(d: dict[str, Any], **kw: Any) -> None:
    s = d["conditioner"][0]["shaper"]
    for key, v in kw.items():
        if v is None:
            s.pop(key, None)
        else:
            s[key] = v


def _green_alone(d: dict[str, Any]) -> None:
    c = d["conditioner"][0]
    c["shaper"]["type"] = "g_trras"
    for key in ("meter", "green", "yellow", "red"):
        c.pop(key)


SR = dsim.srras("1Mbps", cir_th="3KB", mir_th="6KB", buffer="12KB", k="100ms")

CASES: list[tuple[str, Edit, str, str]] = [
    ("pir-below-cir", lambda d: _shaper(d, pir="500kbps"), "conditioner[0].shaper.pir", "at least the CIR (1Mbps) (RFC 2963 section 2.4)"),
    ("mir-below-pir", lambda d: _shaper(d, mir="1.5Mbps"), "conditioner[0].shaper.mir", "at least the PIR (2Mbps)"),
    ("mir-above-line", lambda d: _shaper(d, mir="20Mbps"), "conditioner[0].shaper.mir", "line rate of the shaper's output link (10Mbps)"),
    ("cir-above-default-mir", lambda d: _shaper(d, cir="12Mbps", pir="14Mbps"), "conditioner[0].shaper.cir", "defaults to the line rate"),
    ("pir-above-default-mir", lambda d: _shaper(d, pir="11Mbps"), "conditioner[0].shaper.pir", "defaults to the line rate"),
    ("cir-zero", lambda d: _shaper(d, cir="0bps"), "conditioner[0].shaper.cir", "greater than 0"),
    ("pir-th-below-cir-th", lambda d: _shaper(d, pir_th="2KB"), "conditioner[0].shaper.pir_th", "at least cir_th (3KB)"),
    ("mir-th-below-pir-th", lambda d: _shaper(d, mir_th="5KB"), "conditioner[0].shaper.mir_th", "at least pir_th (6KB)"),
    ("mir-th-above-buffer", lambda d: _shaper(d, buffer="10KB"), "conditioner[0].shaper.mir_th", "must not exceed the buffer size"),
    ("buffer-zero", lambda d: _shaper(d, cir_th="0B", pir_th="0B", mir_th="0B", buffer="0B"), "conditioner[0].shaper.buffer", "greater than 0B (RFC 2963 section 2.4)"),
    ("k-zero", lambda d: _shaper(d, k="0s"), "conditioner[0].shaper.k", "RFC 2963 section 2.3"),
    ("k-missing", lambda d: _shaper(d, k=None), "conditioner[0].shaper", "missing field `k`"),
    ("threshold-in-packets", lambda d: _shaper(d, cir_th="2p"), "conditioner[0].shaper.cir_th", "unknown unit \"p\""),
    ("unknown-key", lambda d: _shaper(d, max_th="1KB"), "conditioner[0].shaper.max_th", "unknown field"),
    ("sr-with-pir", lambda d: d["conditioner"][0].update(shaper={**SR, "pir": "2Mbps"}), "conditioner[0].shaper.pir", "unknown field"),
    ("sr-mir-th", lambda d: d["conditioner"][0].update(shaper={**SR, "mir_th": "2KB"}), "conditioner[0].shaper.mir_th", "RFC 2963 section 2.2"),
    ("unknown-type", lambda d: _shaper(d, type="gtrras"), "conditioner[0].shaper.type", "g_trras"),
    ("green-without-meter", lambda d: _green_alone(d), "conditioner[0].shaper.type", "needs meter = { type = \"trtcm\""),
    ("green-wrong-meter", lambda d: d["conditioner"][0].update(shaper={**SR, "type": "g_srras"}), "conditioner[0].meter.type", "srTCM downstream (RFC 2963 section 3.3)"),
]


@pytest.mark.parametrize("edit,path,rule", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation_errors(edit: Edit, path: str, rule: str, refused) -> None:
    d = base().to_dict()
    edit(d)
    refused(d, path, rule)


def test_the_base_scenario_and_the_green_variants_are_valid() -> None:
    base().validate()
    base(dsim.trras("1Mbps", "2Mbps", cir_th="3KB", pir_th="3KB", mir_th="3KB", buffer="3KB", k="1ms", mir="2Mbps", green=True)).validate()
    base(dsim.srras("1Mbps", cir_th="3KB", mir_th="6KB", buffer="6KB", k="1s", green=True), dsim.srtcm("1Mbps", "3KB", "6KB")).validate()


def test_shipped_scenario_is_what_the_reproduction_builds() -> None:
    sc = Scenario.from_toml(str(Path(ras.__file__).parent.parent / "scenarios" / "ras" / "lan-trras.toml"))
    sc.validate()
    assert sc.get("conditioner") == ras.conditioners("trras")
    assert len(sc.get("flow")) == 100
    # C6 (2 Mbit/s): 5 / 10 / 20 KB; C10 (10 Mbit/s): 25 / 50 / 100 KB.
    assert ras.thresholds(2) == ("5KB", "10KB", "20KB")
    assert ras.thresholds(10) == ("25KB", "50KB", "100KB")


def test_zip_axes_reach_every_variant() -> None:
    base_c = ras.conditioners("trras")
    variants = [ras.conditioners("trras", cbs_kb=c) for c in (3, 400)]
    axes = ras.zip_axes(base_c, variants)
    assert axes["conditioner[0].meter.cbs"] == ["3KB", "400KB"]
    assert axes["conditioner[9].meter.pbs"] == ["6KB", "800KB"]
    assert len(axes) == 20
    assert ras.zip_axes(base_c, [ras.conditioners("g_trras")]) == {f"conditioner[{i}].shaper.type": ["g_trras"] for i in range(5, 10)}


def test_customer_rates_by_hand() -> None:
    import pandas as pd

    conds = pd.DataFrame(
        {
            "replication": [0, 0, 0, 0],
            "conditioner": ["C1", "C1", "C1", "C1"],
            "color": ["shaper", "green", "yellow", "red"],
            "bytes": [0, 2_500_000, 1_250_000, 1_250_000],
        }
    )
    flows = pd.DataFrame({"replication": [0, 0], "flow": ["c1_0", "c1_1"], "goodput_bps": [1e6, 5e5]})
    r = ras.customer_rates(flows, conds, window_s=10.0).iloc[0]
    # 2.5 MB in 10 s = 2 Mbit/s green, 1 yellow, 1 red; goodput 1.5 Mbit/s.
    assert (r["customer"], r["green"], r["yellow"], r["red"], r["total"]) == ("C1", 2.0, 1.0, 1.0, 4.0)
    assert r["green_share"] == 0.5 and r["goodput"] == 1.5


CLAIMS = {
    "ras-tr": ["trRAS-more-throughput", "trRAS-larger-green-share"],
    "ras-tr-cbs": ["A.4-small-cbs", "A.4-large-cbs"],
    "ras-gtr-cbs": ["A.7-small-cbs"],
}


def test_quick_reproductions_hold_the_main_claims(tmp_path: Path) -> None:
    report = run_experiments(registry.select(list(CLAIMS)), out=tmp_path)
    for outcome in report.outcomes:
        assert outcome.error is None, outcome.error
        checks = {c.id: c for c in outcome.checks}
        for cid in CLAIMS[outcome.experiment.name]:
            assert checks[cid].verdict == "pass", (cid, checks[cid].simulated)
        # Every published value of the experiment was compared.
        assert sum(c.kind == "number" for c in outcome.checks) >= (30 if outcome.experiment.name == "ras-tr" else 12)
    assert (tmp_path / "figures" / "ras-tr-cbs-goodput-vs-cbs.png").exists()
