"""The local engine (default): every batch in this process, in source order."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pairaudit.io.readers import Source
    from pairaudit.pipeline import Scanner


def run_local(scanner: Scanner, source: Source, parts: list[Path]) -> None:
    """Run every batch through ``scanner.processor`` and the stages' observe (``scanner.absorb``).
    Progress ("read": rows read, tokenized, checked and observed by the stages) is reported every
    ``PROGRESS_ROWS`` rows within a batch, and after the stages' observe of each batch."""
    total, unit = source.progress_total()
    batch_rows = 0

    def report(done_in_batch: int) -> None:
        # a batch's last rows count once the stages have observed it too (embedding, scoring), so
        # the phase never looks complete while they run; the total is estimated from the rows read
        # so far (the whole batch), not the rows done
        if batch_rows and done_in_batch >= batch_rows:
            return
        estimate = _estimate_rows(scanner.n_input + batch_rows, source, total, unit)
        scanner.ctx.progress("read", scanner.n_input + done_in_batch, estimate)

    for k, records in enumerate(source.batches(scanner.cfg.batch_size)):
        batch_rows = len(records)
        scanner.absorb(scanner.processor.process(records, on_rows=report), parts)
        batch_rows = 0
        if k == 0:
            scanner._first_batch_sanity(records)
        report(0)
    scanner.ctx.progress("read", scanner.n_input, scanner.n_input)


def _estimate_rows(rows: int, source: Source, total: int | None, unit: str) -> int | None:
    """Total rows: known, or extrapolated from the bytes read so far (JSONL)."""
    if unit != "bytes":
        return total
    read = getattr(source, "bytes_read", 0)
    return max(rows, round(rows * total / read)) if total and read else None
