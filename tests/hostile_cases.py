"""The 45 hostile inputs of issue 27 that did not end well, rebuilt from their descriptions,
and the harness that runs a `dsim` command in a child process under limits.

33 Python tracebacks (TOML nested thousands of levels deep, a 5,000-digit integer in a value
and in a sweep range, sweep ranges whose arithmetic overflows), 7 runs killed for memory (a
count of 10^6, an 18 MB scenario, deeply nested tables) and 5 hangs (sweep ranges of 100,000
points). Each must now end with exit status 2 and one line on stderr, in under 2 s and
300 MB. tests/test_hostile.py runs them; `python tests/hostile_cases.py` prints the table
with the time and the peak memory of each.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import THREE_HOPS

ROOT = Path(__file__).resolve().parent.parent
DSIM = [sys.executable, "-m", "dsim"]

#: The valid scenario the cases edit: two hosts, two routers, a CBR and a Poisson flow.
BASE = THREE_HOPS
#: Its CBR source.
CBR = 'app = { type = "cbr", rate = "1Mbps", size = "1500B", spacing_variation = "10%" }'

BIG = "9" * 5000


@dataclass(frozen=True)
class Case:
    """One hostile input: the scenario text and the command's arguments after the file."""

    id: str
    category: str
    what: str
    text: str | bytes
    args: tuple[str, ...] = ()
    command: str = "validate"

    def argv(self, path: Path) -> list[str]:
        return [self.command, str(path), *self.args]


def _with(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


def _nested(depth: int, open_: str, close: str, leaf: str = "1") -> str:
    return open_ * depth + leaf + close * depth


def _sweep(body: str) -> str:
    return f"{BASE}\n[sweep]\n{body}\n"


def _many_flows(n: int) -> str:
    flow = '[[flow]]\nname = "f{i}"\nsrc = "A"\ndst = "B"\napp = {{ type = "cbr", rate = "64kbps", size = "200B" }}\n'
    return BASE + "".join(flow.format(i=i) for i in range(n))


def cases() -> list[Case]:
    tb = "traceback"
    out = [
        # -- deep nesting (tomllib: RecursionError) -------------------------------------------
        Case("nest-array-3000", tb, "an array nested 3,000 deep", f"{BASE}x = {_nested(3000, '[', ']')}\n"),
        Case("nest-array-10000", tb, "an array nested 10,000 deep", f"{BASE}x = {_nested(10000, '[', ']')}\n"),
        Case("nest-inline-3000", tb, "inline tables nested 3,000 deep", f"{BASE}x = {_nested(3000, '{a = ', '}')}\n"),
        Case("nest-mixed-4000", tb, "arrays of inline tables nested 4,000 deep", f"{BASE}x = {_nested(2000, '[{a = ', '}]')}\n"),
        Case("nest-app-2000", tb, "inline tables nested 2,000 deep inside flow[0].app",
             _with('spacing_variation = "10%" }', 'spacing_variation = "10%", x = ' + _nested(2000, "{a = ", "}") + " }")),
        Case("nest-sweep-5000", tb, "a sweep axis nested 5,000 deep", _sweep(f'"duration" = {_nested(5000, "[", "]", chr(34) + "1s" + chr(34))}')),
        Case("nest-hosts-3000", tb, "the hosts list nested 3,000 deep", _with('hosts = ["A", "B"]', f'hosts = ["A", "B", {_nested(3000, "[", "]", chr(34) + "C" + chr(34))}]')),
        # -- 5,000-digit integers (tomllib: ValueError, int max str digits) -------------------
        Case("int-seed", tb, "seed of 5,000 digits", _with('warmup = "1s"', f'warmup = "1s"\nseed = {BIG}')),
        Case("int-seed-negative", tb, "seed of minus 5,000 digits", _with('warmup = "1s"', f'warmup = "1s"\nseed = -{BIG}')),
        Case("int-replications", tb, "replications of 5,000 digits", _with('warmup = "1s"', f'warmup = "1s"\nreplications = {BIG}')),
        Case("int-count", tb, "flow[0].count of 5,000 digits", _with('name = "f"', f'name = "f"\ncount = {BIG}')),
        Case("int-loss", tb, "link[0].loss of 5,000 digits", _with('delay = "1ms"', f'delay = "1ms"\nloss = {BIG}')),
        Case("int-dscp", tb, "flow[0].dscp of 5,000 digits", _with('name = "f"', f'name = "f"\ndscp = {BIG}')),
        Case("int-dscp-name", tb, "a [dscp] name of 5,000 digits", f"{BASE}\n[dscp]\nX = {BIG}\n"),
        Case("int-in-list", tb, "a 5,000-digit integer in the routers list", _with('routers = ["R1", "R2"]', f'routers = ["R1", "R2", {BIG}]')),
        Case("int-tcp-window", tb, "tcp.window of 5,000 digits",
             _with(CBR, f'app = {{ type = "ftp" }}\ntcp = {{ window = {BIG} }}')),
        Case("int-record", tb, "[record] interval of 5,000 digits", f"{BASE}\n[record]\ninterval = {BIG}\n"),
        Case("int-underscored", tb, "an integer of 5,000 digits with underscores", _with('warmup = "1s"', 'warmup = "1s"\nseed = ' + "_".join([BIG[:2500], BIG[2500:]]))),
        # -- ... in a sweep ----------------------------------------------------------------
        Case("sweep-int-start", tb, "sweep range start of 5,000 digits", _sweep(f'"seed" = {{ range = [{BIG}, 10, 1] }}')),
        Case("sweep-int-stop", tb, "sweep range stop of 5,000 digits", _sweep(f'"seed" = {{ range = [1, {BIG}, 1] }}')),
        Case("sweep-int-step", tb, "sweep range step of 5,000 digits", _sweep(f'"seed" = {{ range = [1, 10, {BIG}] }}')),
        Case("sweep-int-value", tb, "a 5,000-digit value in a sweep list", _sweep(f'"seed" = [1, {BIG}]')),
        Case("sweep-cli-int", tb, "--set with a 5,000-digit value", BASE, ("--set", f"seed={BIG}"), "sweep"),
        Case("sweep-cli-int-range", tb, "--set with a 5,000-digit range stop", BASE, ("--set", f"seed=1:{BIG}:1"), "sweep"),
        # -- sweep ranges whose arithmetic overflows ------------------------------------------
        Case("sweep-range-1e9999", tb, "range = [0, 1e9999, 1e-9999] (its count has 20,000 digits)", _sweep('"seed" = { range = ["0", "1e9999", "1e-9999"] }')),
        Case("sweep-range-huge-stop", tb, "range = [0, 1e99999, 1]", _sweep('"seed" = { range = [0, "1e99999", 1] }')),
        Case("sweep-range-wide", tb, "range = [-1e5000, 1e5000, 1e-10]", _sweep('"seed" = { range = ["-1e5000", "1e5000", "1e-10"] }')),
        Case("sweep-range-emax", tb, "range = [0, 10, 1e-999999999] (decimal overflow)", _sweep('"seed" = { range = [0, 10, "1e-999999999"] }')),
        Case("sweep-range-tiny-step", tb, "range = [0, 1, 1e-999990] with a unit", _sweep('"flow[0].app.rate" = { range = [1, 2, "1e-999990"], unit = "Mbps" }')),
        Case("sweep-range-huge-exp", tb, "range = [0, 1e999999999, 1] (a billion-digit count)", _sweep('"seed" = { range = [0, "1E+999999999", 1] }')),
        Case("sweep-range-float-max", tb, "range = [-1.7e308, 1.7e308, 5e-324]", _sweep('"seed" = { range = [-1.7e308, 1.7e308, 5e-324] }')),
        Case("sweep-cli-overflow", tb, "--set seed=0:1e9999:1e-9999", BASE, ("--set", "seed=0:1e9999:1e-9999"), "sweep"),
        Case("sweep-cli-emax", tb, "--set seed=0:10:1e-999999999", BASE, ("--set", "seed=0:10:1e-999999999"), "sweep"),
        # -- memory ----------------------------------------------------------------------
        Case("count-1e6", "memory", "flow[0].count = 1000000", _with('name = "f"', 'name = "f"\ncount = 1000000')),
        Case("count-2x5e5", "memory", "two flows of count 500000", _with('name = "f"', 'name = "f"\ncount = 500000') + '[[flow]]\nname = "more"\ncount = 500000\nsrc = "A"\ndst = "B"\napp = { type = "ftp" }\n'),
        Case("file-18mb-flows", "memory", "an 18 MB file of 180,000 [[flow]] tables", _many_flows(180_000)),
        Case("file-18mb-hosts", "memory", "an 18 MB file: 1,500,000 hosts", _with('hosts = ["A", "B"]', "hosts = [" + ", ".join(f'"h{i}"' for i in range(1_500_000)) + ', "A", "B"]')),
        Case("nest-tables-dotted", "memory", "a table header nested 100,000 deep ([a.a.a...])", f"{BASE}\n[{'.'.join(['a'] * 100_000)}]\nx = 1\n"),
        Case("nest-sweep-dotted", "memory", "a sweep key nested 50,000 deep", _sweep(".".join(["a"] * 50_000) + " = [1]")),
        Case("nest-array-1e6", "memory", "an array nested 1,000,000 deep", f"{BASE}x = {_nested(1_000_000, '[', ']')}\n"),
        # -- hangs -----------------------------------------------------------------------
        Case("sweep-100k", "hang", "a sweep range of 100,000 points", _sweep('"seed" = { range = [1, 100000, 1] }')),
        Case("sweep-100k-unit", "hang", "a rate range of 100,000 points", _sweep('"flow[0].app.rate" = { range = [1, 100000, 1], unit = "kbps" }')),
        Case("sweep-100k-cartesian", "hang", "two axes of 400 and 250 values", _sweep('"seed" = { range = [1, 400, 1] }\n"flow[0].app.rate" = { range = [1, 250, 1], unit = "kbps" }')),
        Case("sweep-100k-decimal", "hang", "range = [0.00001, 1, 0.00001]", _sweep('"link[0].loss" = { range = [0.00001, 1, 0.00001] }')),
        Case("sweep-100k-cli", "hang", "--set seed=1:100000:1", BASE, ("--set", "seed=1:100000:1"), "sweep"),
    ]
    assert len(out) == 45, len(out)
    assert len({c.id for c in out}) == 45
    return out


# -- running a command under limits --------------------------------------------------------------


@dataclass
class Outcome:
    status: int | None  # the exit status, or None when a signal ended the process
    signal: int | None
    stdout: str
    stderr: str
    wall_s: float
    peak_mb: float
    timed_out: bool


def run_dsim(argv: list[str], *, timeout_s: float = 20.0, memory_mb: int = 4096, cwd: Path | None = None, env: dict[str, str] | None = None) -> Outcome:
    """Runs `python -m dsim ARGV` in a child process with an address-space limit, killed
    after `timeout_s`; returns its status, output, wall time and peak resident set (the
    child's own ru_maxrss, from wait4)."""
    import tempfile
    import threading

    def limit() -> None:  # in the child, before exec
        cap = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), NO_COLOR="1", COLUMNS="160", **(env or {}))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        # preexec_fn: the memory cap must hold before dsim allocates; the watchdog thread starts after.
        proc = subprocess.Popen(DSIM + argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, env=env, preexec_fn=limit)  # noqa: PLW1509
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            os.kill(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        return Outcome(
            code if code >= 0 else None, -code if code < 0 else None, out.read().decode(errors="replace"),
            err.read().decode(errors="replace"), wall, usage.ru_maxrss / 1024, killed.is_set(),
        )


def main() -> int:
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases():
            path = Path(tmp) / f"{c.id}.toml"
            path.write_bytes(c.text if isinstance(c.text, bytes) else c.text.encode())
            o = run_dsim(c.argv(path), cwd=Path(tmp))
            lines = o.stderr.strip().splitlines() or [""]
            line = lines[-1].replace(str(path), f"{c.id}.toml")
            ok = o.status == 2 and len(lines) == 1
            rows.append((c, o, line, ok))
            print(f"{'ok ' if ok else 'BAD'} {c.id:24} {o.status!s:4} {o.wall_s:6.2f} s {o.peak_mb:7.1f} MB  {line[:200]}", flush=True)
    print()
    print("| # | case | category | exit | time s | peak MB | the one line |")
    print("|---|---|---|---|---|---|---|")
    for i, (c, o, line, _ok) in enumerate(rows, 1):
        print(f"| {i} | {c.what} | {c.category} | {o.status} | {o.wall_s:.2f} | {o.peak_mb:.0f} | `{line}` |")
    bad = [c.id for c, _, _, ok in rows if not ok]
    print(f"\n{45 - len(bad)} of 45 end with exit 2 and one line" + (f"; not: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
