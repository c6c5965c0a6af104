"""Terminal progress for the CLI: one line per phase of a scan (read, embed, reference, ...) with
counts, rate and ETA, on stderr. Fed through ``ScanConfig``-independent ``progress(phase, done, total)``
calls (see ``pairaudit.config.Progress``)."""

from __future__ import annotations

import time
from typing import Any

PHASE_LABELS = {"read": "read + checks", "embed": "embedding", "reference": "reference model"}


class ProgressDisplay:
    """A rich live display with one task per phase, created on the first update of that phase."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("[bold]{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[rate]:>8,.0f}/s"), TimeElapsedColumn(), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=False)
        self.tasks: dict[str, Any] = {}
        self.t0: dict[str, float] = {}
        self.started = False

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if not self.started:
            self.bar.start()
            self.started = True
        if phase not in self.tasks:
            self.tasks[phase] = self.bar.add_task(PHASE_LABELS.get(phase, phase), total=total, rate=0.0)
            self.t0[phase] = time.perf_counter()
        rate = done / max(time.perf_counter() - self.t0[phase], 1e-9)
        self.bar.update(self.tasks[phase], completed=done, total=total, rate=rate)

    def stop(self) -> None:
        if self.started:
            self.bar.stop()
            self.started = False
