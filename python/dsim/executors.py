"""Where tasks run: in this thread, on every local core, or on a Dask cluster.

A task is one replication of one scenario: its TOML, the base seed and its coordinates
(``(replication,)`` for ``dsim run``, ``(point, replication)`` in a sweep). It runs with
the seed ``derive_seed(base_seed, coordinates)`` whatever runs it, and the simulation is
deterministic, so every executor gives the same tables, bit for bit (only the ``wall_s``
column of the run table differs).

- :class:`Sequential`: one task after the other, in the calling thread.
- :class:`Local`: a pool of threads, one per core by default. Threads rather than
  processes: the simulator releases the GIL for the whole run (it takes it back about ten
  times a second, between two steps, to report progress and check for Ctrl-C), so N
  threads keep N cores busy with no process start-up, no pickling of scenarios and tables,
  and a cancellation that reaches a running task within a step.
- :class:`Dask`: a ``distributed`` cluster, joined at its scheduler's address
  (``tcp://host:8786``) or started here as a LocalCluster of N single-threaded worker
  processes (``local:N``). Every worker needs the same version of dsim installed; a
  result from a worker with another version is refused (it would not be bit-identical).

Every executor hands each result to ``on_result`` in the calling thread as soon as the task
finishes; on Ctrl-C it stops the running tasks, drops the queued ones, and re-raises
KeyboardInterrupt.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Self

import pyarrow as pa

from . import _dsim
from .errors import DsimError, check_integer

__all__ = ["Dask", "Executor", "Local", "Sequential", "Task", "TaskResult", "cores", "execute", "make_executor"]


@dataclass(frozen=True)
class Task:
    """One replication of one scenario."""

    toml: str
    base_seed: int
    coords: tuple[int, ...]
    #: Folder for the pcap files of the scenario's [[capture]] points (None: no captures).
    capture_dir: str | None = None

    @property
    def seed(self) -> int:
        return _dsim.derive_seed(self.base_seed, list(self.coords))

    @property
    def replication(self) -> int:
        return self.coords[-1]

    @property
    def point(self) -> int | None:
        return self.coords[0] if len(self.coords) > 1 else None


@dataclass
class TaskResult:
    """What a task produced: its tables, or the error that stopped it (and no table)."""

    tables: dict[str, pa.Table]
    error: str | None = None
    #: "ScenarioError", "SimulationError", or the name of another exception.
    error_kind: str | None = None
    version: str = ""
    events: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


class Cancelled(BaseException):
    """Raised inside a running task to stop it (not an Exception: nothing should catch it)."""


Hook = Callable[[float, float, int], None]


def execute(toml: str, base_seed: int, coords: Sequence[int], progress: Hook | None = None, capture_dir: str | None = None) -> TaskResult:
    """Runs one task. dsim's own errors are returned, not raised, so that they cross process
    and machine boundaries as plain data."""
    from . import __version__
    from .errors import DsimError as _DsimError

    try:
        raw = _dsim.run_task(toml, base_seed, list(coords), progress, capture_dir)
    except _DsimError as e:
        return TaskResult({}, str(e), type(e).__name__, __version__)
    tables = {name: pa.Table.from_batches([pa.record_batch(t)]) for name, t in raw.items()}
    events = int(tables["run"].column("events")[0].as_py()) if "run" in tables and tables["run"].num_rows else 0
    return TaskResult(tables, None, None, __version__, events)


def cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


OnResult = Callable[[Task, TaskResult], None]


class Executor(ABC):
    """Runs tasks; see the module documentation. Sequential, Local and Dask implement `run`."""

    name = "executor"
    #: Tasks that run at the same time (for display).
    workers = 1

    @abstractmethod
    def run(self, tasks: Sequence[Task], on_result: OnResult, hook_for: Callable[[Task], Hook | None] | None = None) -> None:
        """Runs `tasks`, calling `on_result` for each as it finishes (any order)."""

    def close(self) -> None:  # noqa: B027 (optional: only an executor that holds workers has something to close)
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    def describe(self) -> str:
        return self.name


class Sequential(Executor):
    """One task after the other in the calling thread (Ctrl-C stops the running task)."""

    name = "sequential"

    def run(self, tasks: Sequence[Task], on_result: OnResult, hook_for: Callable[[Task], Hook | None] | None = None) -> None:
        for t in tasks:
            on_result(t, execute(t.toml, t.base_seed, t.coords, hook_for(t) if hook_for else None, t.capture_dir))


class Local(Executor):
    """A pool of `jobs` threads (default: one per core)."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.workers = jobs or cores()

    def describe(self) -> str:
        return f"{self.workers} local thread(s)"

    def run(self, tasks: Sequence[Task], on_result: OnResult, hook_for: Callable[[Task], Hook | None] | None = None) -> None:
        cancel = threading.Event()

        def hook(task: Task) -> Hook:
            inner = hook_for(task) if hook_for else None

            def step(now: float, end: float, events: int) -> None:
                if cancel.is_set():
                    raise Cancelled()
                if inner is not None:
                    inner(now, end, events)

            return step

        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="dsim-task")
        try:
            futures: dict[Future[TaskResult], Task] = {pool.submit(execute, t.toml, t.base_seed, t.coords, hook(t), t.capture_dir): t for t in tasks}
            pending = set(futures)
            while pending:
                # A timeout keeps the main thread responsive to Ctrl-C.
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=lambda f: futures[f].coords):
                    on_result(futures[f], _result_of(f))
        except BaseException:
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)


def _result_of(f: Future[TaskResult] | Any) -> TaskResult:
    try:
        return f.result()
    except Exception as e:  # noqa: BLE001 (any failure fails this task alone: a bug outside the simulator, or a lost Dask worker)
        return TaskResult({}, f"{type(e).__name__}: {e}", type(e).__name__)


class Dask(Executor):
    """A Dask ``distributed`` cluster: ``address`` is ``tcp://host:port`` (a running
    scheduler) or ``local:N`` (a LocalCluster of N single-threaded worker processes, started
    here and closed with this executor); or pass a ``distributed.Client``."""

    name = "dask"

    def __init__(self, address: str | None = None, *, client: Any = None) -> None:
        try:
            import distributed
        except ImportError:
            raise DsimError("Dask executors need the dask extra: pip install 'dsim[dask]'") from None
        self.address = address
        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
        elif address is not None and address.startswith("local:"):
            n = _count(address.removeprefix("local:"), "--dask local:N")
            self._cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
            )
            self.client = distributed.Client(self._cluster)
        elif address:
            try:
                self.client = distributed.Client(address, timeout=20)
            except ValueError as e:  # not an address at all ("missing port number in address 'local'")
                raise DsimError(f"Dask scheduler address {address!r}: {e}; write tcp://host:port, or local:N for N local workers") from None
            except OSError as e:
                raise DsimError(f"cannot reach the Dask scheduler at {address}: {e}") from None
        else:
            raise DsimError("a Dask executor needs an address (tcp://host:port or local:N) or a client")
        self.workers = max(1, sum(self.client.nthreads().values()))

    def describe(self) -> str:
        where = self.address or (getattr(self.client, "scheduler", None) and self.client.scheduler.address)
        threads = sum(self.client.nthreads().values())
        if threads == 0:  # tasks wait in the scheduler until a worker joins
            return f"Dask at {where}, no worker yet (tasks start when one joins: dask worker {where})"
        return f"Dask at {where}, {threads} worker thread(s)"

    def run(self, tasks: Sequence[Task], on_result: OnResult, hook_for: Callable[[Task], Hook | None] | None = None) -> None:
        from distributed import as_completed

        futures = {self.client.submit(execute, t.toml, t.base_seed, t.coords, None, t.capture_dir, pure=False): t for t in tasks}
        try:
            for f in as_completed(list(futures)):
                on_result(futures[f], _result_of(f))
                f.release()
        except BaseException:
            self.client.cancel(list(futures))
            raise

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def _count(text: str, what: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise DsimError(f"{what}: {text!r} is not a positive number of workers")
    return n


def make_executor(spec: str | int | Executor | Any | None = None, jobs: int | None = None) -> Executor:
    """An executor from a description.

    None or "local": every core (`jobs` threads if given; `jobs` = 1 runs sequentially);
    "sequential"; "local:N"; "dask:tcp://host:port" or "dask:local:N"; an int N (N threads);
    an Executor; or a ``distributed.Client``.
    """
    if jobs is not None:
        check_integer("jobs", jobs, 0)
    if isinstance(spec, Executor):
        return spec
    if spec is None or spec == "local":
        return Sequential() if jobs == 1 else Local(jobs)
    if isinstance(spec, bool):
        raise DsimError(f"executor {spec!r}: not an executor")
    if isinstance(spec, int):
        return Sequential() if spec == 1 else Local(_count(str(spec), "executor"))
    if isinstance(spec, str):
        if spec == "sequential":
            return Sequential()
        if spec.startswith("local:"):
            return Local(_count(spec.removeprefix("local:"), "executor local:N"))
        if spec.startswith("dask:"):
            return Dask(spec.removeprefix("dask:"))
        raise DsimError(f"executor {spec!r}: choose sequential, local, local:N, dask:tcp://host:port or dask:local:N")
    if type(spec).__name__ == "Client" and type(spec).__module__.startswith("distributed"):
        return Dask(client=spec)
    raise DsimError(f"executor {spec!r}: not an executor")
