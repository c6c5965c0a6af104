"""What every source yields: ``Record`` batches with the contract row numbers (docs/contract.md), and the ``Source``
interface the pipeline and the writers use. The concrete sources live in ``io.readers`` (files),
``io.hf`` (datasets objects and splits) and ``io.python_sources`` (DataFrames, dicts)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Record:
    row: int
    data: dict[str, Any] | None
    error: str | None = None
    field: str | None = None


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class Source:
    """A readable preference source. ``kind`` is jsonl | json | parquet | hf_disk | hf_hub, or for
    Python objects dataset | iterable_dataset | dataframe | records.

    ``writes_as`` (default: ``kind``) picks the writer for clean/dropped outputs; ``shardable`` is
    False for sources that cannot be reopened elsewhere (``--engine ray``); ``splits`` lists
    (split, first row, rows) when several splits are scanned as one source.
    """

    kind: str
    path: str
    ext: str  # output extension for clean/dropped
    shardable: bool = True
    splits: list[tuple[str, int, int]] | None = None

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        raise NotImplementedError

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        """Original records for the writer: (rows, raw batch) in source order."""
        raise NotImplementedError

    @property
    def total(self) -> int | None:
        return None

    def progress_total(self) -> tuple[int | None, str]:
        return self.total, "rows"

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind}
