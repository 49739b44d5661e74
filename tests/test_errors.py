"""Bad scenarios are refused before anything runs, with the key path, the value, the rule
and (from a file) the line; the same mistakes give the same message from TOML, from the
Python builder and from the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dsim
from conftest import THREE_HOPS, three_hops_builder

# (id, edit of the TOML text, edit of the builder, key path, value, words of the rule)
MISTAKES = [
    ("rate-without-unit", ('rate = "10Mbps"', 'rate = "10"'), ("link[0].rate", "10"), "link[0].rate", '"10"', "units are mandatory"),
    ("rate-number", ('rate = "10Mbps"', "rate = 10"), ("link[0].rate", 10), "link[0].rate", "10", "units are mandatory"),
    ("unknown-unit", ('delay = "1ms"', 'delay = "1mss"'), ("link[0].delay", "1mss"), "link[0].delay", '"1mss"', "unknown unit"),
    ("negative-delay", ('delay = "1ms"', 'delay = "-1ms"'), ("link[0].delay", "-1ms"), "link[0].delay", '"-1ms"', "negative"),
    ("zero-rate", ('rate = "10Mbps"', 'rate = "0Mbps"'), ("link[0].rate", "0Mbps"), "link[0].rate", '"0Mbps"', "greater than 0"),
    ("unknown-node", ('to = "R1"', 'to = "R9"'), ("link[0].to", "R9"), "link[0].to", '"R9"', "no node has this name"),
    ("flow-from-router", ('src = "A"', 'src = "R1"'), ("flow[0].src", "R1"), "flow[0].src", '"R1"', "router"),
    ("flow-to-itself", ('dst = "B"', 'dst = "A"'), ("flow[0].dst", "A"), "flow[0].dst", '"A"', "must differ"),
    ("warmup-too-long", ('warmup = "1s"', 'warmup = "10s"'), ("warmup", "10s"), "warmup", '"10s"', "before the run"),
    ("zero-duration", ('duration = "10s"', 'duration = "0s"'), ("duration", "0s"), "duration", '"0s"', "longer than 0s"),
    ("unknown-key", ('name = "f"', 'name = "f"\nspeed = "1Mbps"'), ("flow[0].speed", "1Mbps"), "flow[0].speed", '"1Mbps"', "unknown field `speed`"),
    ("unknown-app", ('type = "cbr"', 'type = "cbrr"'), ("flow[0].app.type", "cbrr"), "flow[0].app.type", '"cbrr"', "unknown type `cbrr`"),
    ("tiny-datagram", ('size = "1500B"', 'size = "20B"'), ("flow[0].app.size", "20B"), "flow[0].app.size", '"20B"', "28B"),
    ("fractional-bytes", ('size = "1500B"', 'size = "1.5B"'), ("flow[0].app.size", "1.5B"), "flow[0].app.size", '"1.5B"', "whole number"),
    ("variation-100pc", ('spacing_variation = "10%"', 'spacing_variation = "100%"'), ("flow[0].app.spacing_variation", "100%"), "flow[0].app.spacing_variation", '"100%"', "below 100"),
    ("queue-limit-unit", ('limit = "20p"', 'limit = "20"'), ("link[1].queue.limit", "20"), "link[1].queue.limit", '"20"', "packets (p) or bytes"),
    ("empty-queue", ('limit = "20p"', 'limit = "0p"'), ("link[1].queue.limit", "0p"), "link[1].queue.limit", '"0p"', "limit must be greater than 0"),
    ("unknown-queue", ('type = "droptail"', 'type = "fifo"'), ("link[1].queue.type", "fifo"), "link[1].queue.type", '"fifo"', "unknown type `fifo`"),
    ("bad-dscp", ('name = "f"', 'name = "f"\ndscp = "AF51"'), ("flow[0].dscp", "AF51"), "flow[0].dscp", '"AF51"', "AF classes are 1-4"),
    ("stop-before-start", ('name = "f"', 'name = "f"\nstart = "5s"\nstop = "2s"'), ("flow[0].stop", "0s"), "flow[0].stop", '"2s"', "after start"),
    ("loss-one", ('delay = "1ms"', 'delay = "1ms"\nloss = 1.0'), ("link[0].loss", 1.0), "link[0].loss", "1.0", "below 1"),
    ("duplicate-flow", ('name = "p"', 'name = "f"'), ("flow[1].name", "f"), "flow[1].name", '"f"', "already exists"),
    ("too-many-flows", ('name = "f"', 'name = "f"\ncount = 2000000'), ("flow[0].count", 2000000), "flow[0].count", "2000000", "at most 20,000 (raise it with --max-flows N"),
]


def _edit_text(text_edit: tuple[str, str]) -> str:
    old, new = text_edit
    assert old in THREE_HOPS, old
    return THREE_HOPS.replace(old, new, 1)


def _line_of(text: str, needle: str) -> int:
    """The last line containing `needle` (the edit; a duplicate is refused where it repeats)."""
    lines = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert lines, needle
    return lines[-1]


@pytest.mark.parametrize("case", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_from_toml_file(case, tmp_path: Path) -> None:
    _, text_edit, _, path, value, rule = case
    text = _edit_text(text_edit)
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(dsim.ScenarioError) as ei:
        dsim.Scenario.from_toml(f)
    e = ei.value
    assert e.path == path
    assert e.value == value
    assert rule in e.rule
    assert e.file == str(f)
    assert e.line == _line_of(text, text_edit[1].splitlines()[-1])
    assert str(e).startswith(f"{f}: line {e.line}: {path} = {value}: ")


@pytest.mark.parametrize("case", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_from_builder(case) -> None:
    _, _, (key, bad), path, _, rule = case
    sc = three_hops_builder()
    sc.set(key, bad)
    with pytest.raises(dsim.ScenarioError) as ei:
        dsim.run(sc)
    assert ei.value.path == path
    assert rule in ei.value.rule


def test_an_edited_file_scenario_names_the_file_but_no_line(tmp_path: Path) -> None:
    f = tmp_path / "three.toml"
    f.write_text(THREE_HOPS)
    sc = dsim.Scenario.from_toml(f).copy().set("link[0].rate", "10")
    with pytest.raises(dsim.ScenarioError) as ei:
        sc.validate()
    e = ei.value
    assert str(e) == f'{f} (edited in Python): link[0].rate = "10": {e.rule}' and e.line is None and e.file == str(f)
    built = three_hops_builder().set("link[0].rate", "10")
    with pytest.raises(dsim.ScenarioError) as ei:
        built.validate()
    assert str(ei.value) == f'link[0].rate = "10": {ei.value.rule}' and ei.value.line is None


@pytest.mark.parametrize("case", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_from_cli(case, tmp_path: Path) -> None:
    _, text_edit, _, path, value, rule = case
    f = tmp_path / "bad.toml"
    f.write_text(_edit_text(text_edit))
    commands = [["validate", str(f)]]
    if case[0] in ("rate-without-unit", "unknown-node", "unknown-app"):  # `run` refuses the same way
        commands.append(["run", str(f), "--out", str(tmp_path / "out")])
    for cmd in commands:
        p = subprocess.run([sys.executable, "-m", "dsim.cli", *cmd], capture_output=True, text=True)
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr
        assert f"{path} = {value}: " in p.stderr and rule in " ".join(p.stderr.split())
        assert not (tmp_path / "out").exists()


def test_toml_syntax_error_has_a_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text('duration = "1s"\n[nodes\nhosts = []\n')
    with pytest.raises(dsim.ScenarioError) as ei:
        dsim.Scenario.from_toml(f)
    assert ei.value.line == 2
    assert "not valid TOML" in ei.value.rule


def test_missing_type_and_missing_key() -> None:
    sc = three_hops_builder()
    sc.set("flow[0].app", {"rate": "1Mbps", "size": "100B"})
    with pytest.raises(dsim.ScenarioError, match="missing key `type`"):
        sc.validate()
    sc = three_hops_builder()
    del sc.data["link"][0]["rate"]
    with pytest.raises(dsim.ScenarioError) as ei:
        sc.validate()
    assert ei.value.path == "link[0]" and "missing field `rate`" in ei.value.rule


def test_bad_python_arguments() -> None:
    sc = three_hops_builder()
    for kwargs, words in (
        (dict(replications=0), "replications = 0: must be an integer from 1"),
        (dict(replications=1.5), "replications = 1.5: must be an integer"),
        (dict(seed=-1), "seed = -1: must be an integer from 0"),
        (dict(seed=2**64), "seed = 18446744073709551616: must be an integer from 0 to 2\\^64 - 1"),
        (dict(seed=True), "seed = True"),
        (dict(jobs="2"), "jobs = '2'"),
        (dict(replications=10**9), "replications = 1000000000: must be an integer from 1 to 1,000,000"),
    ):
        with pytest.raises(dsim.ScenarioError, match=words):
            dsim.run(sc, **kwargs)
        with pytest.raises(dsim.ScenarioError, match=words):
            dsim.sweep(sc, {"flow[0].app.rate": ["1Mbps"]}, **kwargs)
    with pytest.raises(dsim.ScenarioError, match=re.escape("scenario = 42: expected a dsim.Scenario, a scenario file's path or TOML text, not int")):
        dsim.run(42)
    for call, words in (
        (lambda: dsim.replication_seed(True, 0), "seed = True"),
        (lambda: dsim.replication_seed(1, -1), "replication = -1"),
        (lambda: dsim.derive_seed(2**64, [0]), "seed = 18446744073709551616"),
        (lambda: dsim.derive_seed(1, [0, "1"]), "coords\\[1\\] = '1'"),
    ):
        with pytest.raises(dsim.ScenarioError, match=words):
            call()


def test_bad_cli_flags(three_hops_file: Path) -> None:
    for flags, words in ((["--replications", "0"], "at least 1"), (["--seed", "x"], "not an integer"), (["--format", "xls"], "invalid choice")):
        p = subprocess.run([sys.executable, "-m", "dsim.cli", "run", str(three_hops_file), *flags], capture_output=True, text=True)
        assert p.returncode == 2
        assert words in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "run", "/nonexistent.toml"], capture_output=True, text=True)
    assert p.returncode == 2 and "No such file" in p.stderr and "Traceback" not in p.stderr


def test_a_scenario_without_flows_is_refused_before_it_runs(tmp_path: Path) -> None:
    sc = dsim.Scenario(duration="1s").hosts("A", "B")
    sc.link("A", "B", rate="1Mbps", delay="1ms")
    with pytest.raises(dsim.ScenarioError, match=r"^flow: a scenario needs at least one \[\[flow\]\]"):
        dsim.run(sc)
    f = tmp_path / "quiet.toml"
    f.write_text(sc.to_toml())
    p = subprocess.run([sys.executable, "-m", "dsim.cli", "validate", str(f)], capture_output=True, text=True)
    assert p.returncode == 2 and f"{f}: flow: a scenario needs at least one [[flow]]" in p.stderr and "Traceback" not in p.stderr


def test_get_hash_and_canonical_toml_name_the_entry_and_no_line() -> None:
    sc = three_hops_builder()
    with pytest.raises(dsim.ScenarioError, match=r"^link\[7\]: no such entry in the scenario"):
        sc.get("link[7].rate")
    sc.set("link[0].rate", "10")
    for method in (sc.hash, sc.canonical_toml):
        with pytest.raises(dsim.ScenarioError) as ei:
            method()
        assert str(ei.value).startswith('link[0].rate = "10"') and ei.value.line is None


def test_a_value_toml_cannot_write_is_named_and_a_file_may_have_any_suffix(three_hops_file: Path, tmp_path: Path) -> None:
    sc = three_hops_builder().set("link[0].delay", None)
    with pytest.raises(dsim.ScenarioError, match=r"^link\[0\]\.delay = None: a value is a string"):
        sc.validate()
    other = tmp_path / "three.scenario"
    other.write_text(three_hops_file.read_text())
    assert dsim.Scenario.from_toml(str(other)).name == "three-hops"
