"""The EF family of `dsim reproduce` (RFC 2598 appendix A.3, seed 003), in quick mode.

The jitter numbers of Tables 1-3 are compared with a simulation whose topology is only
partly given, so some miss (with a reason); what is asserted here is what must hold
whatever those details: the experiments run, every published cell is compared, every miss
says why, and the claims that follow from the mechanisms (no EF loss inside the network,
the VLL is a wire to TCP, the edge policer discards exactly the excess, PQ beats WRR for
the large packets, more queues do not help) pass.
"""

from __future__ import annotations

import pytest

from dsim.reproduce import ef, registry, run_experiments
from dsim.reproduce.framework import PASS


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("ef")
    return run_experiments(registry.select(["ef"]), out=out), out


def outcome(report, name: str):
    [o] = [o for o in report[0].outcomes if o.experiment.name == name]
    return o


def verdicts(report, name: str) -> dict[str, str]:
    return {c.id: c.verdict for c in outcome(report, name).checks}


def test_family_registered() -> None:
    names = [e.name for e in registry.select(["seed-003"])]
    assert names == ["ef-flows", "ef-ratio", "ef-queues", "ef-vll", "ef-policer"]
    assert names == [e.name for e in registry.select(["ef"])]


def test_every_experiment_runs_and_explains_its_misses(report) -> None:
    rep, out = report
    assert [o.experiment.name for o in rep.outcomes] == ["ef-flows", "ef-ratio", "ef-queues", "ef-vll", "ef-policer"]
    for o in rep.outcomes:
        assert o.error is None, o.notes
        assert o.checks
        for c in o.misses():
            assert c.note, f"{o.experiment.name}/{c.id} misses without a reason"
    assert (out / "report.md").exists()
    figures = {p.name for p in (out / "figures").iterdir()}
    for name in ("ef-flows-fig1-1500", "ef-flows-fig2-160", "ef-ratio-fig3-1500", "ef-ratio-fig4-160", "ef-queues-fig5-1500"):
        assert f"{name}.png" in figures


def test_every_published_cell_is_compared(report) -> None:
    numbers = {o.experiment.name: [c for c in o.checks if c.kind == "number"] for o in report[0].outcomes}
    assert len(numbers["ef-flows"]) == 4 * len(ef.TABLE1)
    assert len(numbers["ef-ratio"]) == 4 * len(ef.TABLE2)
    assert len(numbers["ef-queues"]) == 2 * len(ef.TABLE3)
    assert len(numbers["ef-vll"]) == 2 * len(ef.TABLE4)
    published = {c.published for c in numbers["ef-ratio"]}
    assert {178.0, 104.0, 13.0} <= published


def test_mechanism_claims_hold(report) -> None:
    for name in ("ef-flows", "ef-ratio", "ef-queues", "ef-vll", "ef-policer"):
        assert verdicts(report, name)["no-ef-loss"] == PASS, name
    vll = verdicts(report, "ef-vll")
    for pct in (20, 40, 60):
        assert vll[f"vll-within-3pct-{pct}"] == PASS
    assert all(v == PASS for v in verdicts(report, "ef-policer").values())
    assert verdicts(report, "ef-flows")["pq-far-below-wrr-1500"] == PASS
    assert verdicts(report, "ef-ratio")["pq-far-below-wrr-1500"] == PASS
    queues = verdicts(report, "ef-queues")
    assert queues["pq-far-below-wrr"] == PASS
    assert queues["more-queues-p50_1500"] == PASS and queues["more-queues-p90_1500"] == PASS
    ratio = verdicts(report, "ef-ratio")
    assert ratio["not-pq-1500"] == PASS and ratio["not-pq-160"] == PASS


def test_pq_numbers_of_the_large_packets_match(report) -> None:
    # PQ's 1500 B jitter is the residual of one background packet: dsim lands in the band.
    for name, key in (("ef-flows", "pq"), ("ef-ratio", "pq"), ("ef-queues", "pq")):
        v = verdicts(report, name)
        assert v[f"{key}-p50_1500"] == PASS and v[f"{key}-p90_1500"] == PASS, name


def test_the_claims_of_the_brief_are_all_evaluated(report) -> None:
    # REPRODUCTIONS.md's EF claims are each recorded (pass or miss with a reason).
    flows, ratio, vll = verdicts(report, "ef-flows"), verdicts(report, "ef-ratio"), verdicts(report, "ef-vll")
    for c in ("p50_1500", "p90_1500", "p50_160", "p90_160"):
        assert f"falls-{c}" in ratio and f"levels-off-{c}" in ratio
    assert {"pq-far-below-wrr-1500", "pq-far-below-wrr-160"} <= set(flows) & set(ratio)
    assert "below-one-packet-time" in ratio
    assert {f"vll-within-3pct-{p}" for p in (20, 40, 60)} | {f"below-target-{p}" for p in (20, 40, 60)} <= set(vll)


def test_wrr_jitter_falls_with_the_ratio_and_levels_off(report) -> None:
    # Table 2's trend, in the weak form dsim reproduces in quick mode: every column is lower
    # at ratio 3.0 than at 1.03, the 1500 B ones by more than 20 %, and within 30 % of the
    # value at 1.5 beyond it (the claims hold the document's 10 %; how much it falls from
    # 1.03 to 1.5 and how flat it stays are the misses the notes explain).
    sim = {c.id: c.simulated for c in outcome(report, "ef-ratio").checks if c.kind == "number"}
    for c in ("p50_1500", "p90_1500", "p50_160", "p90_160"):
        assert sim[f"3.0-{c}"] < sim[f"1.03-{c}"], c
    for c in ("p50_1500", "p90_1500"):
        assert sim[f"3.0-{c}"] < 0.8 * sim[f"1.03-{c}"], c
    for c in ("p50_1500", "p90_1500", "p50_160", "p90_160"):
        at_15 = sim[f"1.5-{c}"]
        assert all(abs(sim[f"{r}-{c}"] - at_15) <= 0.3 * at_15 for r in ("1.7", "2.0", "3.0")), c
    assert verdicts(report, "ef-ratio")["below-one-packet-time"] == PASS
