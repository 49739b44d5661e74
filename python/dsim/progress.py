"""Live progress of runs and sweeps (rich), fed by the simulator between two steps.

A running task reports (simulated time reached, end of the run, events handled) about ten
times a second; a finished task reports whether it succeeded. The bar counts finished
tasks plus the finished fraction of the running ones, so its ETA moves smoothly even when
a sweep has few long tasks. Nothing is shown when the console is not a terminal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Self

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["Monitor"]


def _rate(events: float, seconds: float) -> str:
    if seconds <= 0:
        return ""
    r = events / seconds
    return f"{r / 1e6:.2f} M events/s" if r >= 1e5 else f"{r / 1e3:.1f} k events/s"


class Monitor:
    """Counts the progress of `total` tasks and shows it (when `show`).

    kind "run": the replications of one scenario; the bar is simulated time.
    kind "sweep": points x replications; the bar is tasks.
    """

    def __init__(self, total: int, *, kind: str = "sweep", show: bool = False, console: Console | None = None, title: str = "", reused: int = 0) -> None:
        self.total = total
        self.kind = kind
        self.done = 0
        self.failed = 0
        #: Tasks found finished in a result store (not part of `total`).
        self.reused = reused
        self._fraction: dict[Any, float] = {}
        self._events: dict[Any, int] = {}
        self._events_total = 0
        self._sim_done = 0.0
        self._sim_total = 0.0
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        self._last_draw = 0.0
        self._progress: Progress | None = None
        if show and total:
            con = console or Console()
            if con.is_terminal:
                self._progress = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    TaskProgressColumn(),
                    TextColumn("{task.fields[detail]}"),
                    TimeElapsedColumn(),
                    TextColumn("ETA"),
                    TimeRemainingColumn(),
                    console=con,
                    transient=False,
                )
                self._bar = self._progress.add_task(title or kind, total=float(total), detail="")

    # -- feeding -------------------------------------------------------------------------

    def hook_for(self, key: Any) -> Callable[[float, float, int], None]:
        """The callback a running task calls between steps."""

        def step(now: float, end: float, events: int) -> None:
            with self._lock:
                self._fraction[key] = now / end if end > 0 else 1.0
                self._events_total += events - self._events.get(key, 0)
                self._events[key] = events
                if self.kind == "run":
                    self._sim_total = max(self._sim_total, end * self.total)
            self._draw()

        return step

    def finished(self, key: Any, ok: bool, events: int = 0) -> None:
        with self._lock:
            self._fraction.pop(key, None)
            if events and key not in self._events:
                self._events_total += events
            self._events.pop(key, None)
            self.done += 1
            self.failed += 0 if ok else 1
        self._draw(force=True)

    # -- showing -------------------------------------------------------------------------

    def _draw(self, force: bool = False) -> None:
        if self._progress is None:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        with self._lock:
            completed = self.done + sum(self._fraction.values())
            elapsed = now - self._t0
            rate = _rate(self._events_total, elapsed)
            if self.kind == "run":
                per = self._sim_total / self.total if self.total else 0.0
                detail = f"{completed * per:,.1f} / {self._sim_total:,.1f} s simulated"
            else:
                detail = f"{self.done}/{self.total} tasks"
                if self.reused:
                    detail += f" (+{self.reused} already in the store)"
                if self.failed:
                    detail += f", [red]{self.failed} failed[/]"
            if rate:
                detail += f", {rate}"
        self._progress.update(self._bar, completed=completed, detail=detail)

    def __enter__(self) -> Self:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._draw(force=True)
            self._progress.stop()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._t0
