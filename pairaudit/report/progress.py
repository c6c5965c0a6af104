"""Progress of a scan, per phase, fed by ``progress(phase, done, total)`` calls (``config.Progress``).

Phases: ``read`` (rows read, tokenized and checked; reported every few hundred rows), ``embed``
(texts embedded), ``reference`` (sequences scored), ``finalize`` (whole-dataset stages done) and
``write`` (output steps). Two views:

* :class:`ProgressDisplay`: a rich live display, one line per phase with a bar, counts, rate and ETA
  (the CLI on a terminal; ``pairaudit.scan(progress=True)`` in a notebook);
* :class:`PlainProgress`: plain text lines, at most one per phase every ``interval`` seconds plus
  one when a phase completes (the CLI when stderr is not a terminal, so logs and CI show progress;
  the API's default, to the ``pairaudit.progress`` logger).

:func:`quiet_libraries` (from ``pairaudit.quiet``) turns off the progress bars of datasets ("Saving the
dataset"), transformers ("Loading weights") and huggingface_hub while a scan runs, and restores them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pairaudit.quiet import quiet_libraries

__all__ = ["PlainProgress", "ProgressDisplay", "quiet_libraries", "status_line"]

PHASE_LABELS = {"read": "read + checks", "embed": "embedding", "embed_static": "embedding (static)",
                "reference": "reference model", "finalize": "whole-dataset checks", "write": "writing outputs"}
PHASE_UNITS = {"read": "rows", "embed": "texts", "embed_static": "texts", "reference": "sequences",
               "finalize": "stages", "write": "steps"}


def label(phase: str) -> str:
    return PHASE_LABELS.get(phase, phase.replace("_", " "))


def unit(phase: str) -> str:
    return PHASE_UNITS.get(phase, "items")


def duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``1h 02m``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


class _Rate:
    """Items per second and ETA of one phase, from its first report on."""

    def __init__(self, done: int) -> None:
        self.t0 = time.monotonic()
        self.done0 = done

    def rate(self, done: int) -> float | None:
        dt = time.monotonic() - self.t0
        return (done - self.done0) / dt if dt > 0.2 and done > self.done0 else None

    def eta(self, done: int, total: int | None) -> float | None:
        r = self.rate(done)
        return (total - done) / r if r and total is not None and total >= done else None


def status_line(phase: str, done: int, total: int | None, rate: float | None, eta: float | None,
                elapsed: float | None = None) -> str:
    """One plain progress line, e.g. ``read + checks: 1,250 / 2,354 rows (53%), 31 rows/s, ETA 36s``."""
    u = unit(phase)
    if total is not None and done >= total and elapsed is not None:
        text = f"{label(phase)}: done, {done:,} {u} in {duration(elapsed)}"
        return text + (f" ({rate:,.0f} {u}/s)" if rate and u not in ("stages", "steps") else "")
    text = f"{label(phase)}: {done:,}"
    if total is not None:
        text += f" / {total:,} {u} ({100 * done / total:.0f}%)" if total else f" / 0 {u}"
    else:
        text += f" {u}"
    if rate is not None and u not in ("stages", "steps"):
        text += f", {rate:,.0f} {u}/s"
    if eta is not None and u not in ("stages", "steps"):  # stages and output steps differ too much in cost
        text += f", ETA {duration(eta)}"
    return text


STREAM_END = ("finalize", "write")  # phases that start once every batch was read


def open_streaming(state: dict[str, tuple[int, int | None]], phase: str) -> list[tuple[str, int]]:
    """Phases counted without a total while the data streamed (e.g. static embedding), to close as
    complete when ``phase`` shows the stream has ended: [(phase, count)]."""
    if phase not in STREAM_END:
        return []
    return [(p, done) for p, (done, total) in state.items() if total is None and p != phase]


class PlainProgress:
    """Plain progress lines through ``write`` (e.g. ``logger.info`` or a stderr printer): the first
    report of a phase, then at most one line per phase every ``interval`` seconds, and a last line
    when the phase completes (``done == total``). When nothing was written for ``heartbeat`` seconds
    while a phase is still open (a long embedding batch, a whole-dataset search), a background thread
    repeats its line with how long the count has not moved. Call ``stop`` at the end."""

    def __init__(self, write: Callable[[str], None], interval: float = 5.0, heartbeat: float | None = 30.0) -> None:
        self.write = write
        self.interval = interval
        self.heartbeat = heartbeat
        self.rates: dict[str, _Rate] = {}
        self.last: dict[str, float] = {}
        self.state: dict[str, tuple[int, int | None, float]] = {}  # phase -> (done, total, when)
        self.finished: set[str] = set()
        self.current: str | None = None
        self.last_line = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        with self._lock:
            closing = open_streaming({p: (d, t) for p, (d, t, _) in self.state.items()}, phase)
        for other, count in closing:  # the stream is over: its open counts are final
            self(other, count, count)
        line = None
        with self._lock:
            now = time.monotonic()
            if phase not in self.rates:
                self.rates[phase] = _Rate(done)
                self.last[phase] = -float("inf")
            self.state[phase] = (done, total, now)
            self.current = phase
            complete = total is not None and done >= total
            if complete and phase in self.finished:
                return
            if not complete:
                self.finished.discard(phase)  # the phase goes on (a later pass)
            if complete or now - self.last[phase] >= self.interval:
                r = self.rates[phase]
                self.last[phase] = self.last_line = now
                if complete:
                    self.finished.add(phase)
                line = status_line(phase, done, total, r.rate(done), r.eta(done, total), now - r.t0)
            if self.heartbeat and self._thread is None:
                self._thread = threading.Thread(target=self._beat, name="pairaudit-progress", daemon=True)
                self._thread.start()
        if line is not None:
            self.write(line)

    def _beat(self) -> None:
        assert self.heartbeat is not None
        while not self._stop.wait(min(1.0, self.heartbeat / 2)):
            with self._lock:
                phase, now = self.current, time.monotonic()
                if phase is None or phase in self.finished or now - self.last_line < self.heartbeat:
                    continue
                done, total, when = self.state[phase]
                r = self.rates[phase]
                self.last_line = now
                line = (status_line(phase, done, total, r.rate(done), None) +
                        f"; still working ({duration(now - when)} since the last count)")
            self.write(line)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


STALE_AFTER = 10.0  # seconds without a new count before the live display says so instead of an ETA


def _status_column() -> Any:
    """A rich column computed at every refresh (4 times a second): the phase's average rate (it falls
    while a count does not move), the ETA from it, or how long the count has not moved."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class StatusColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            f = task.fields
            done, total, u = int(task.completed), task.total, f["unit"]
            rates: _Rate = f["rates"]
            per_item = u not in ("stages", "steps")
            if total is not None and done >= total:
                return Text("done", style="green")
            parts = []
            rate = rates.rate(done)
            if rate is not None and per_item:
                parts.append(f"{rate:,.0f} {u}/s")
            stale = time.monotonic() - f["updated"]
            if stale >= STALE_AFTER:
                parts.append(f"no new count for {duration(stale)}")
            elif per_item:  # no ETA from a count of stages or output steps: they differ too much in cost
                eta = rates.eta(done, total)
                if eta is not None:
                    parts.append(f"ETA {duration(eta)}")
            return Text(" · ".join(parts), style="cyan")

    return StatusColumn()


class ProgressDisplay:
    """A rich live display, one task per phase (created on the phase's first report): bar, count, unit,
    elapsed time, then the average rate and ETA, or how long the count has not moved (recomputed at
    every refresh, so a phase waiting on a slow step shows it); ``log`` prints a message above it.
    Call ``stop`` at the end."""

    def __init__(self, console: Any = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from pairaudit.report.terminal import safe_console

        self.console = console or safe_console(stderr=True)
        self.bar = Progress(TextColumn("[bold]{task.description:<20}"), BarColumn(bar_width=30), MofNCompleteColumn(),
                            TextColumn("{task.fields[unit]:<9}"), TimeElapsedColumn(), _status_column(),
                            console=self.console, transient=False, refresh_per_second=4)
        self.tasks: dict[str, Any] = {}
        self.totals: dict[str, tuple[int, int | None]] = {}
        self.started = False

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if not self.started:
            self.bar.start()
            self.started = True
        for other, count in open_streaming(self.totals, phase):
            self.bar.update(self.tasks[other], completed=count, total=count, updated=time.monotonic())
            self.totals[other] = (count, count)
        self.totals[phase] = (done, total)
        if phase not in self.tasks:
            self.tasks[phase] = self.bar.add_task(label(phase), total=total, unit=unit(phase), rates=_Rate(done),
                                                  updated=time.monotonic())
        self.bar.update(self.tasks[phase], completed=done, total=total, updated=time.monotonic())

    def log(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False)

    def stop(self) -> None:
        if self.started:
            self.bar.stop()
            self.started = False
