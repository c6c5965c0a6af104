"""Source shards (``io/shards.py``): a Parquet file of many row groups is cut into runs of row groups of about equal
bytes, and the shards read back, in order, are the source's records with the source's row numbers."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from support.planting import hh_rows

from pairaudit.io.readers import ParquetSource
from pairaudit.io.shards import first_row, plan_shards, read_shard


def _write(path: Path, rows: list[tuple[str, str, str]], group_rows: int) -> None:
    table = pa.table({"prompt": [p for p, _, _ in rows], "chosen": [c for _, c, _ in rows],
                      "rejected": [r for _, _, r in rows]})
    pq.write_table(table, path, row_group_size=group_rows)


def _records(specs: list[dict], batch: int = 64) -> list[tuple[int, dict]]:
    return [(r.row, r.data) for spec in specs for recs in read_shard(spec, batch) for r in recs]


def test_parquet_files_of_many_row_groups_become_byte_balanced_shards(tmp_path: Path) -> None:
    rows = hh_rows(600)
    rows = [(p * 4, c * 4, r * 4) if i < 150 else (p, c, r) for i, (p, c, r) in enumerate(rows)]  # long rows first
    folder = tmp_path / "pq"
    folder.mkdir()
    _write(folder / "a.parquet", rows[:500], group_rows=25)  # 20 row groups, the first 6 of 4x longer rows
    _write(folder / "b.parquet", rows[500:], group_rows=100)  # one row group
    source = ParquetSource(folder)
    specs = plan_shards(source, 4)
    assert [s["file"] for s in specs].count(str(folder / "b.parquet")) == 1  # a row group is never cut
    cut = [s for s in specs if s["file"] == str(folder / "a.parquet")]
    assert len(cut) >= 3, specs
    meta = pq.ParquetFile(folder / "a.parquet").metadata
    sizes = [sum(meta.row_group(i).total_byte_size for i in range(*s["row_groups"])) for s in cut]
    rows_of = [sum(meta.row_group(i).num_rows for i in range(*s["row_groups"])) for s in cut]
    assert max(sizes) < 2 * min(sizes), sizes  # balanced by bytes ...
    assert rows_of[0] < rows_of[-1], rows_of  # ... not by rows: the shard of long rows holds fewer of them
    got = _records(specs)
    want = [(r.row, r.data) for recs in source.batches(64) for r in recs]
    assert got == want and [row for row, _ in got] == list(range(600))
    assert [first_row(s) for s in specs] == [next(read_shard(s, 64))[0].row for s in specs]


def test_parquet_files_of_one_row_group_stay_one_shard_each(tmp_path: Path) -> None:
    rows = hh_rows(90)
    folder = tmp_path / "pq"
    folder.mkdir()
    for k in range(3):
        _write(folder / f"part-{k}.parquet", rows[k * 30:(k + 1) * 30], group_rows=1000)
    specs = plan_shards(ParquetSource(folder), 8)
    assert [(Path(s["file"]).name, s["row_offset"]) for s in specs] == [
        ("part-0.parquet", 0), ("part-1.parquet", 30), ("part-2.parquet", 60)]
    assert [row for row, _ in _records(specs)] == list(range(90))


def test_a_parquet_shard_reads_an_invalid_utf8_cell_as_the_local_reader_does(tmp_path: Path) -> None:
    """A Ray shard turns its rows into records the local reader's way (``arrow_records``, dictionary columns with
    Parquet's own indices): a cell that is not valid UTF-8 is one malformed record naming its column, in a plain
    and in a dictionary-encoded (int8 indices, as pandas writes a Categorical) column, not an error for the shard."""
    chosen = pa.array([b"ok one", b"bad \xff", b"ok three"], pa.binary()).view(pa.string())
    for name, col in (("plain", chosen), ("dictionary", pa.DictionaryArray.from_arrays(
            chosen.dictionary_encode().indices.cast(pa.int8()), chosen.dictionary_encode().dictionary))):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"prompt": ["a", "b", "c"], "chosen": col, "rejected": ["x", "y", "z"]}), path)
        source = ParquetSource(path)
        got = [r for spec in plan_shards(source, 2) for recs in read_shard(spec, 64) for r in recs]
        want = [r for recs in source.batches(64) for r in recs]
        assert [(r.row, r.data, r.error) for r in got] == [(r.row, r.data, r.error) for r in want], name
        assert got[1].data is None and "invalid UTF-8 in column 'chosen'" in got[1].error, name


def test_a_large_source_gets_more_default_shards_each_at_most_shard_bytes(tmp_path: Path, monkeypatch) -> None:
    """Default shards: two per worker for a small file; a large one is cut so that no shard holds more than
    ``SHARD_BYTES`` (an actor's per-shard working set stays bounded at any size); the shards read back are the
    file's records, in order."""
    import json

    import pairaudit.io.shards as shards
    from pairaudit.io.readers import JsonlSource

    rows = hh_rows(400)
    path = tmp_path / "hh.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "chosen": c, "rejected": r}) + "\n" for p, c, r in rows),
                    encoding="utf-8")
    size = path.stat().st_size
    source = JsonlSource(path)
    assert shards.default_shard_count(source, 4) == 4  # small: the floor (SHARD_BYTES is 40 MB)
    monkeypatch.setattr(shards, "SHARD_BYTES", size // 10)  # as if the file were ten times the limit
    n = shards.default_shard_count(source, 4)
    assert n == 11, n
    specs = plan_shards(source, n)
    assert len(specs) == n and max(s["end"] - s["start"] for s in specs) <= size // 10 + 2000  # a line at most over
    assert [row for row, _ in _records(specs)] == list(range(400))
    folder = tmp_path / "pq"
    folder.mkdir()
    _write(folder / "a.parquet", rows, group_rows=10)  # 40 row groups
    total = sum(pq.ParquetFile(folder / "a.parquet").metadata.row_group(i).total_byte_size for i in range(40))
    monkeypatch.setattr(shards, "SHARD_BYTES", total // 8)
    assert shards.default_shard_count(ParquetSource(folder), 2) == 9  # uncompressed bytes, from the metadata
    monkeypatch.setattr(shards, "SHARD_ROWS", 50)  # no bytes known (an in-memory dataset): rows instead
    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"prompt": p, "chosen": c, "rejected": r} for p, c, r in rows]), encoding="utf-8")
    from pairaudit.io.readers import JsonArraySource

    assert shards.default_shard_count(JsonArraySource(array), 2) == 8
