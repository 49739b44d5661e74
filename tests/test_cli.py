"""The `dsim` command: run, validate, reproduce."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd


def dsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsim.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_run_prints_and_writes(three_hops_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    p = dsim_cli("run", str(three_hops_file), "--seed", "4", "-r", "3", "--out", str(out), "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert "throughput Mbit/s" in p.stdout and "R1->R2" in p.stdout
    assert "3 replication(s)" in p.stdout
    flows = pd.read_csv(out / "flows.csv")
    assert len(flows) == 6
    assert json.loads((out / "summary.json").read_text())["base_seed"] == 4


def test_validate_ok(three_hops_file: Path) -> None:
    p = dsim_cli("validate", str(three_hops_file))
    assert p.returncode == 0 and p.stdout.startswith(f"ok: {three_hops_file} (4 nodes, 3 links, 2 flows")


def test_reproduce_list_and_unknown() -> None:
    p = dsim_cli("reproduce", "--list")
    assert p.returncode == 0
    for name in ("dd1", "fifo-overload", "md1"):
        assert name in p.stdout
    p = dsim_cli("reproduce", "nope")
    assert p.returncode == 2 and "unknown experiment or family 'nope'" in p.stderr and "Traceback" not in p.stderr


def test_reproduce_writes_report(tmp_path: Path) -> None:
    p = dsim_cli("reproduce", "dd1", "--out", str(tmp_path), "--strict")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "5 of 5 published numbers and claims reproduced" in p.stdout and "pass" in p.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    [exp] = report["experiments"]
    assert exp["name"] == "dd1" and exp["error"] is None
    assert {c["verdict"] for c in exp["checks"]} == {"pass"}
    delay = next(c for c in exp["checks"] if c["id"] == "delay-mean-delay")
    assert abs(delay["reference"]["mean"] - 16.2) < 1e-9 and abs(delay["value"]["mean"] - 16.2) < 1e-6
    assert "| check | kind | source | published | dsim | band / rule | verdict |" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_error_messages_keep_their_brackets_and_bad_dask_addresses_are_usage_errors(three_hops_file: Path, tmp_path: Path) -> None:
    swept = tmp_path / "swept.toml"
    swept.write_text(three_hops_file.read_text() + '\n[sweep]\n"flow[0].app.rate" = ["1Mbps", "2Mbps"]\n')
    p = dsim_cli("run", str(swept))
    assert p.returncode == 2 and "or remove its [sweep] table" in p.stderr, p.stderr
    for addr in ("local", "foo"):
        p = dsim_cli("run", str(three_hops_file), "--dask", addr, "--out", str(tmp_path / "o"))
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert f"Dask scheduler address '{addr}': missing port number" in p.stderr and "local:N" in p.stderr


def test_files_and_folders_are_checked_before_anything_runs(three_hops_file: Path, tmp_path: Path) -> None:
    text = three_hops_file.read_text()
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'name = "caf\xe9"\n')
    p = dsim_cli("validate", str(bom), str(tmp_path / "missing.toml"), str(latin), str(three_hops_file))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.startswith(f"ok: {bom} (4 nodes, 3 links, 2 flows") and f"ok: {three_hops_file}" in p.stdout
    assert "No such file or directory" in p.stderr and "latin.toml: the byte at offset 11 is not UTF-8" in p.stderr
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    p = dsim_cli("run", str(three_hops_file), "--out", str(a_file))
    assert p.returncode == 2 and f"--out {a_file}: exists and is not a folder" in p.stderr
    escaping = tmp_path / "escaping.toml"
    escaping.write_text(text.replace('name = "three-hops"', 'name = "../out"') if 'name = "three-hops"' in text else 'name = "../out"\n' + text)
    p = dsim_cli("run", str(escaping), cwd=tmp_path)
    assert p.returncode == 2 and "name = '../out': the default output folder" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_output_into_a_closed_pipe_ends_with_141(three_hops_file: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "dsim.cli", "run", str(three_hops_file), "-r", "1", "--out", str(tmp_path / "o")]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait() == 141 and "Traceback" not in err, err
