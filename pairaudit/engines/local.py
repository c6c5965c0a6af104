"""The local engine (default): every batch in source order, in this process or, with ``--workers N`` (default:
the CPUs this process may use), checked and observed in N worker processes and merged here in row order
(``engines.pool``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pairaudit.io.readers import Record, Source
    from pairaudit.pipeline import Scanner


#: the pool starts only for sources of at least this many rows (estimated): starting the workers (a fresh
#: interpreter each, loading the tokenizer and the static model) costs more than it saves on small inputs
POOL_MIN_ROWS = 10_000


def run_local(scanner: Scanner, source: Source, parts: list[Path]) -> None:
    """Run every batch through ``scanner.processor`` and the stages' observe (``scanner.absorb``), in this
    process or in the pool. Progress ("read": rows read, tokenized, checked and observed by the stages) is
    reported every ``PROGRESS_ROWS`` rows within a batch (in-process) or after each merged batch (pool)."""
    from pairaudit.engines.pool import default_workers, pool_blocker, run_pool

    total, unit = source.progress_total()
    batches = source.batches(scanner.cfg.batch_size)
    first = next(batches, None)
    if first is None:
        scanner.ctx.progress("read", 0, 0)
        return
    workers = scanner.cfg.workers or default_workers()
    why = pool_blocker(scanner, source) if workers > 1 else None
    if why and scanner.cfg.workers:
        scanner.log(f"--workers {workers}: every batch runs in this process: {why}")
    expected = _estimate_rows(len(first), source, total, unit)
    if workers > 1 and why is None and (expected is None or expected >= POOL_MIN_ROWS):
        run_pool(scanner, first, batches, parts, workers, lambda done, read: scanner.ctx.progress(
            "read", done, _estimate_rows(read, source, total, unit)))
    else:
        _in_process(scanner, source, _chain(first, batches), parts, total, unit)
    scanner.ctx.progress("read", scanner.n_input, scanner.n_input)


def _in_process(scanner: Scanner, source: Source, batches: Iterator[list[Record]], parts: list[Path],
                total: int | None, unit: str) -> None:
    batch_rows = 0

    def report(done_in_batch: int) -> None:
        # a batch's last rows count once the stages have observed it too (embedding, scoring), so
        # the phase never looks complete while they run; the total is estimated from the rows read
        # so far (the whole batch), not the rows done
        if batch_rows and done_in_batch >= batch_rows:
            return
        estimate = _estimate_rows(scanner.n_input + batch_rows, source, total, unit)
        scanner.ctx.progress("read", scanner.n_input + done_in_batch, estimate)

    for k, records in enumerate(batches):
        batch_rows = len(records)
        scanner.absorb(scanner.processor.process(records, on_rows=report), parts)
        batch_rows = 0
        if k == 0:
            scanner.first_batch_sanity(records)
        report(0)


def _chain(first: list[Record], rest: Iterator[list[Record]]) -> Iterator[list[Record]]:
    yield first
    yield from rest


def _estimate_rows(rows: int, source: Source, total: int | None, unit: str) -> int | None:
    """Total rows: known, or extrapolated from the bytes read so far (JSONL)."""
    if unit != "bytes":
        return total
    read = getattr(source, "bytes_read", 0)
    return max(rows, round(rows * total / read)) if total and read else None
