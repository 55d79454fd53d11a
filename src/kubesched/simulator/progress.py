"""A progress bar on standard error for simulations that take a while: pods done, pending, rate, ETA.

It is a watcher of the simulation's outcomes. On each outcome it only counts and compares the
clock with the time of its next draw, so it costs the run next to nothing; rich draws the bar
at most `INTERVAL` apart, from this thread (no refresh thread), and only once the run has lasted
`DELAY`. Log lines written meanwhile go above the bar.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from kubesched.framework.outcome import Outcome
from kubesched.simulator.run import SimulationResult

DELAY = 1.0  # seconds before the bar shows: short runs print nothing
INTERVAL = 0.5  # seconds between draws


class RunProgress:
    """Watches a simulation's outcomes (`simulate(..., watchers=[progress])`); `close()` when the run ends."""

    def __init__(
        self,
        console: Console,
        *,
        delay: float | None = None,
        interval: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.console = console
        self.delay = DELAY if delay is None else delay
        self.interval = INTERVAL if interval is None else interval
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.next_draw = self.started + self.delay
        self.scheduled = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._streams: list[tuple[logging.StreamHandler[Any], Any]] = []

    def __call__(self, result: SimulationResult, outcome: Outcome) -> None:
        if outcome.result == "Scheduled":
            self.scheduled += 1
        now = self.clock()
        if now < self.next_draw:
            return
        self.next_draw = now + self.interval
        self._draw(result, now)

    def _draw(self, result: SimulationResult, now: float) -> None:
        if self._progress is None:
            self._start()
        assert self._progress is not None and self._task is not None
        done, total = len(result.outcomes), max(len(result.pending), len(result.outcomes))
        elapsed = max(now - self.started, 1e-9)
        self._progress.update(
            self._task,
            completed=done,
            total=total,
            scheduled=self.scheduled,
            pending=total - self.scheduled,
            rate=f"{done / elapsed:,.0f} pods/s",
        )
        self._progress.refresh()

    def _start(self) -> None:
        progress = Progress(
            TextColumn("scheduling"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("{task.fields[scheduled]} scheduled, {task.fields[pending]} pending, {task.fields[rate]}"),
            TimeRemainingColumn(),
            console=self.console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=True,
        )
        self._task = progress.add_task("scheduling", total=None, scheduled=0, pending=0, rate="")
        before = sys.stderr
        progress.start()
        if sys.stderr is not before:  # rich now passes stderr through above the bar: so do the log handlers
            for handler in logging.getLogger().handlers:
                if isinstance(handler, logging.StreamHandler) and handler.stream is before:
                    self._streams.append((handler, handler.setStream(sys.stderr)))
        self._progress = progress

    def close(self) -> None:
        """Take the bar away (it leaves nothing behind) and give the log handlers their stream back."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        for handler, stream in self._streams:
            handler.setStream(stream)
        self._streams.clear()
