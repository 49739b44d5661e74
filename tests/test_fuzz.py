"""Fuzzing in `make test` (issues 27 and 28), within a fixed budget: mutated shipped
scenarios, mutated traces (CSV and pcap) and hostile calls of the public API. Each case must
be accepted or refused with one `dsim` error line (exit status 2 on the command line):
never a traceback, a non-dsim exception or a Rust panic. The cases run in this process
(the limits keep each one small: tests/test_hostile.py runs the inputs that once took
gigabytes or hung in child processes under limits); `make fuzz` runs a longer campaign
(tests/fuzz_campaign.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from fuzz_strategies import api_case, outcome, scenario_case, trace_case

#: Cases per strategy: together a few hundred, well under a minute of CPU.
BUDGET = {"scenario": 300, "trace": 200, "api": 300}
FUZZ = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)


def _check(case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outcome(case, Path(tmp))


@settings(max_examples=BUDGET["scenario"], **FUZZ)
@given(scenario_case())
def test_mutated_scenarios_are_accepted_or_refused_in_one_line(case) -> None:
    _check(case)


@settings(max_examples=BUDGET["trace"], **FUZZ)
@given(trace_case())
def test_mutated_traces_are_accepted_or_refused_in_one_line(case) -> None:
    _check(case)


@settings(max_examples=BUDGET["api"], **FUZZ)
@given(api_case())
def test_the_public_api_raises_only_dsim_errors(case) -> None:
    _check(case)
