"""Write the cleaned and dropped records in the input's own format, in input order.

Kept JSONL lines are written byte for byte as read (BOM and CR removed); flipped rows (review
decisions) are re-serialised with chosen and rejected swapped, and with ``--explicit-prompt`` every kept
implicit-prompt record gets an explicit prompt (:func:`explicit_prompt_record`). Dropped records are written as
``{"row": n, "reasons": [...], "record": <original record or null>, "raw": <text if unparseable>}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pairaudit.errors import InputError
from pairaudit.io.base import Record, arrow_records, lossy_pylist, undecodable_cells
from pairaudit.io.formats import IMPLICIT_FORMATS
from pairaudit.io.hf import MultiSplitSource
from pairaudit.io.jsontext import json_bytes, parse_json_line
from pairaudit.io.readers import Source

CLEAN, DROPPED = "clean", "dropped"


def flip_record(rec: dict[str, Any], fmt: str, columns: Mapping[str, str]) -> dict[str, Any]:
    """The record with the preference reversed (swap chosen/rejected, or invert a pairwise label)."""
    rec = dict(rec)
    if fmt == "pairwise_label":
        key = columns.get("label", "label")
        label = rec[key]
        inverse = {0: 1, 1: 0, "0": "1", "1": "0", "a": "b", "b": "a", "A": "B", "B": "A"}
        rec[key] = inverse.get(label, label)
        return rec
    if fmt == "pretokenized":
        for suffix in ("input_ids", "attention_mask", "labels"):
            c, r = f"chosen_{suffix}", f"rejected_{suffix}"
            if c in rec and r in rec:
                rec[c], rec[r] = rec[r], rec[c]
        return rec
    c, r = columns.get("chosen", "chosen"), columns.get("rejected", "rejected")
    rec[c], rec[r] = rec[r], rec[c]
    return rec


def explicit_prompt_record(rec: dict[str, Any], columns: Mapping[str, str]) -> dict[str, Any]:
    """An implicit-prompt record with an explicit ``prompt`` (``--explicit-prompt``): the prompt up to the
    last ``"\\n\\nAssistant:"`` both HH strings share, or the messages before the last assistant turn, and
    ``chosen`` / ``rejected`` holding only the responses, so TRL uses the prompt as is instead of its
    character-wise ``extract_prompt``. A record that already has a prompt, or that is malformed, is
    returned as it is."""
    from pairaudit.io.formats import Malformed, _messages, split_hh, split_implicit_messages

    c_key, r_key = columns.get("chosen", "chosen"), columns.get("rejected", "rejected")
    c, r = rec.get(c_key), rec.get(r_key)
    if "prompt" in rec:
        return rec
    if isinstance(c, str) and isinstance(r, str):
        prompt, cc, rr, _ = split_hh(c, r)
    elif isinstance(c, list) and isinstance(r, list):
        try:
            pm, _, rm, _ = split_implicit_messages(_messages(c, c_key), _messages(r, r_key))
        except Malformed:
            return rec
        # the chosen side's history before its last assistant turn, as pairaudit reads the pair (the raw
        # messages are kept, e.g. ShareGPT from/value)
        prompt, cc, rr = list(c[:len(pm)]), list(c[len(pm):]), list(r[len(r) - len(rm):])
    else:
        return rec
    return {"prompt": prompt, **rec, c_key: cc, r_key: rr}


def kept_record(rec: dict[str, Any], flip: bool, fmt: str, columns: Mapping[str, str],
                explicit_prompt: bool) -> dict[str, Any]:
    """A kept record as the cleaned output holds it: flipped (review decisions, ``--flip``) and/or with an
    explicit prompt (``--explicit-prompt``)."""
    if flip:
        rec = flip_record(rec, fmt, columns)
    return explicit_prompt_record(rec, columns) if explicit_prompt else rec


def _dropped_line(row: int, reasons: list[str], record: Any, raw: str | None = None) -> bytes:
    out: dict[str, Any] = {"row": row, "reasons": reasons, "record": record}
    if raw is not None:
        out["raw"] = raw
    return json_bytes(out) + b"\n"


def write_outputs(source: Source, tmp_dir: Path, drops: Mapping[int, list[str]], flips: set[int], fmt: str,
                  columns: Mapping[str, str], batch_size: int = 5000, explicit_prompt: bool = False) -> dict[str, int]:
    """Write clean/dropped files into ``tmp_dir``; returns counts. ``explicit_prompt``: kept implicit-prompt
    records get an explicit prompt column (:func:`explicit_prompt_record`)."""
    ep = explicit_prompt and fmt in IMPLICIT_FORMATS
    if isinstance(source, MultiSplitSource):
        return _write_hf_splits(source, tmp_dir, drops, flips, fmt, columns, ep)
    kind = getattr(source, "writes_as", source.kind)  # Python sources: see io.python_sources
    if kind == "jsonl":
        return _write_jsonl(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep)
    if kind == "json":
        return _write_json(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep)
    if kind == "parquet":
        return _write_parquet(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep)
    return _write_hf(source, tmp_dir, drops, flips, fmt, columns, ep)


def _write_jsonl(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep):
    with open(tmp_dir / "clean.jsonl", "wb") as fc, open(tmp_dir / "dropped.jsonl", "wb") as fd:
        return write_jsonl_batches(source.raw_batches(batch_size), fc, fd, drops, flips, fmt, columns, ep)


def write_jsonl_batches(batches: Iterable[tuple[list[int], list[bytes]]], fc: BinaryIO, fd: BinaryIO,
                        drops: Mapping[int, list[str]], flips: set[int], fmt: str,
                        columns: Mapping[str, str], ep: bool = False) -> dict[str, int]:
    """Kept lines to ``fc``, dropped ones to ``fd``: the whole file, or one shard of it (Ray engine);
    ``ep``: kept implicit-prompt records get an explicit prompt column."""
    kept = dropped = 0
    for rows, raws in batches:
        for row, raw in zip(rows, raws):
            if row in drops:
                obj, err, _ = parse_json_line(raw)
                fd.write(_dropped_line(row, drops[row], obj, raw.decode("utf-8", "replace") if err else None))
                dropped += 1
            elif row in flips or ep:
                obj, _, _ = parse_json_line(raw)
                fc.write(json_bytes(kept_record(obj, row in flips, fmt, columns, ep)) + b"\n")
                kept += 1
            else:
                fc.write(raw + b"\n")
                kept += 1
    return {"kept": kept, "dropped": dropped}


def _write_json(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep):
    from pairaudit.io.readers import json_item_record

    kept: list[bytes] = []
    dropped: list[bytes] = []
    for rows, items in source.raw_batches(batch_size):
        for row, item in zip(rows, items):
            raw = bytes(item) if isinstance(item, bytes) else None  # an item that had to be parsed alone
            if row in drops:
                rec = json_item_record(row, item)
                text = raw.decode("utf-8", "replace") if raw is not None and rec.error else None
                dropped.append(_dropped_line(row, drops[row], rec.data if raw is not None else item, text).rstrip())
            elif row in flips or ep:
                rec = json_item_record(row, item)
                kept.append(json_bytes(kept_record(rec.data, row in flips, fmt, columns, ep)))
            else:
                kept.append(raw if raw is not None else json_bytes(item))
    for name, items in (("clean.json", kept), ("dropped.json", dropped)):
        with open(tmp_dir / name, "wb") as fh:
            fh.write(b"[\n" + b",\n".join(items) + (b"\n]\n" if items else b"]\n"))
    return {"kept": len(kept), "dropped": len(dropped)}


def _write_parquet(source, tmp_dir, drops, flips, fmt, columns, batch_size, ep):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = source.schema
    out_schema = schema
    if ep and "prompt" not in schema.names:  # the prompt has the type of the chosen column
        out_schema = schema.insert(0, pa.field("prompt", schema.field(columns.get("chosen", "chosen")).type))
    dropped = _DroppedTable(schema)
    kept = 0
    with pq.ParquetWriter(tmp_dir / "clean.parquet", out_schema) as writer:
        for rows, rb in source.raw_batches(batch_size):
            keep_mask = [r not in drops for r in rows]
            if ep or any(r in drops or r in flips for r in rows):
                table = _changed_batch(rows, rb, keep_mask, dropped, drops, flips, out_schema,
                                       lambda rec, r: kept_record(rec, r in flips, fmt, columns, ep))
            else:
                table = pa.Table.from_batches([rb], schema=schema)
            kept += table.num_rows
            if table.num_rows:
                writer.write_table(table)
    pq.write_table(dropped.table(), tmp_dir / "dropped.parquet")
    return {"kept": kept, "dropped": dropped.count}


def _changed_batch(rows: list[int], rb: Any, keep_mask: list[bool], dropped: _DroppedTable,
                   drops: Mapping[int, list[str]], flips: set[int], out_schema: Any, keep: Any) -> Any:
    """The kept rows of a batch in which rows are dropped or changed; its dropped rows go to ``dropped``. A
    batch with a row that cannot be decoded (a string cell that is not UTF-8) is cut with Arrow, so that
    row's bytes reach dropped.parquet as they were read."""
    import pyarrow as pa

    records = arrow_records(rows, rb)
    if any(rec.data is None for rec in records):
        index = [i for i, r in enumerate(rows) if r in drops]
        dropped.add_arrow([rows[i] for i in index], [drops[rows[i]] for i in index], rb.take(index))
        kept = [i for i, k in enumerate(keep_mask) if k]
        if not any(rows[i] in flips for i in kept) and out_schema.equals(rb.schema):
            return pa.Table.from_batches([rb.take(kept)], schema=out_schema)
        records = [rec if rec.data is not None or not k else _undecodable(rec) for rec, k in zip(records, keep_mask)]
    for r, rec in zip(rows, records):
        if r in drops:
            dropped.add(r, drops[r], rec.data)
    return pa.Table.from_pylist([keep(rec.data, r) for r, rec, k in zip(rows, records, keep_mask) if k],
                                schema=out_schema)


def _undecodable(rec: Record) -> Record:
    raise InputError(f"row {rec.row} cannot be decoded ({rec.error}) and is kept (malformed_record is not "
                     "dropped), so it cannot be rewritten", fix="drop it: leave malformed_record's action at drop")


class _DroppedTable:
    """dropped.parquet's rows, in row order: ``{"row", "reasons", "record"}``. A record that cannot be decoded
    (a string cell that is not UTF-8) is written readable (U+FFFD for its bad bytes) and its bad cells' bytes,
    as read, go to the column ``raw_cells`` (``[{"column", "bytes"}]``; null for the other rows), which exists
    only when there is such a row."""

    def __init__(self, schema: Any) -> None:
        import pyarrow as pa

        self.schema = pa.schema([("row", pa.int64()), ("reasons", pa.list_(pa.string())),
                                 ("record", pa.struct(list(schema)))])
        self.pending: list[dict[str, Any]] = []
        self.count = 0
        self.raw = False

    def add(self, row: int, reasons: list[str], record: Any) -> None:
        self.pending.append({"row": row, "reasons": reasons, "record": record})
        self.count += 1

    def add_arrow(self, rows: list[int], reasons: list[list[str]], rb: Any) -> None:
        records, raw = undecodable_cells(rb)
        for row, why, rec, cells in zip(rows, reasons, records, raw):
            self.pending.append({"row": row, "reasons": why, "record": rec, "raw_cells": cells})
        self.count += len(rows)
        self.raw = self.raw or any(c is not None for c in raw)

    def table(self) -> Any:
        import pyarrow as pa

        schema = self.schema.append(pa.field("raw_cells", raw_cells_type())) if self.raw else self.schema
        return pa.Table.from_pylist(self.pending, schema=schema)


def raw_cells_type() -> Any:
    """``raw_cells``' Arrow type: the undecodable cells of a dropped record, with their bytes as read."""
    import pyarrow as pa

    return pa.list_(pa.struct([("column", pa.string()), ("bytes", pa.binary())]))


def _write_hf(source, tmp_dir, drops, flips, fmt, columns, ep):
    import hashlib

    from datasets import Features, List, Value

    ds = source.ds
    keep_idx = [i for i in range(len(ds)) if i not in drops]
    fp = hashlib.sha256(json.dumps([sorted(drops), sorted(flips)]).encode()).hexdigest()[:16]
    clean = ds.select(keep_idx, new_fingerprint=f"clean-{fp}")
    scratch = _Scratch(tmp_dir)
    if flips:
        flip_pos = {r for r in flips if r not in drops}
        idx_of = {r: k for k, r in enumerate(keep_idx)}
        positions = {idx_of[r] for r in flip_pos}
        clean = clean.map(lambda rec, k: flip_record(rec, fmt, columns) if k in positions else rec,
                          with_indices=True, new_fingerprint=f"flip-{fp}", cache_file_name=scratch("flip"))
    if ep:
        clean = clean.map(lambda rec: explicit_prompt_record(rec, columns), new_fingerprint=f"prompt-{fp}",
                          cache_file_name=scratch("prompt"))
    clean.save_to_disk(str(tmp_dir / "clean"), num_shards=_shards(clean))
    scratch.remove()
    drop_rows = sorted(drops)
    features = Features({"row": Value("int64"), "reasons": List(Value("string")), "record": ds.features})
    columns_ = {"row": drop_rows, "reasons": [drops[r] for r in drop_rows]}
    dropped = _hf_dropped(ds.select(drop_rows) if drop_rows else None, columns_, features)
    dropped._fingerprint = f"dropped-{fp}"
    dropped.save_to_disk(str(tmp_dir / "dropped"), num_shards=_shards(dropped))
    return {"kept": len(clean), "dropped": len(drop_rows)}


def _write_hf_splits(source, tmp_dir, drops, flips, fmt, columns, ep):
    """Several splits (``io.hf.MultiSplitSource``): ``clean/`` a DatasetDict folder of the kept rows of
    each split, ``dropped/`` one Dataset of ``{"row", "split", "split_row", "reasons", "record"}``."""
    import hashlib

    from datasets import Dataset, DatasetDict, Features, List, Value

    fp = hashlib.sha256(json.dumps([source.split, sorted(drops), sorted(flips)]).encode()).hexdigest()[:16]
    clean: dict[str, Any] = {}
    dropped: list[dict[str, Any]] = []
    scratch = _Scratch(tmp_dir)
    for name, off, ds in source.parts:
        local_drops = [r - off for r in sorted(drops) if off <= r < off + len(ds)]
        dropped_set = set(local_drops)
        keep = [i for i in range(len(ds)) if i not in dropped_set]
        part = ds.select(keep, new_fingerprint=f"clean-{name}-{fp}")
        local_flips = {k for k, i in enumerate(keep) if off + i in flips}
        if local_flips:
            part = part.map(lambda rec, k, fl=local_flips: flip_record(rec, fmt, columns) if k in fl else rec,
                            with_indices=True, new_fingerprint=f"flip-{name}-{fp}",
                            cache_file_name=scratch(f"flip-{name}"))
        if ep:
            part = part.map(lambda rec: explicit_prompt_record(rec, columns), new_fingerprint=f"prompt-{name}-{fp}",
                            cache_file_name=scratch(f"prompt-{name}"))
        clean[name] = part
        records = lossy_pylist(ds.select(local_drops).with_format("arrow")[:]) if local_drops else []
        dropped.extend({"row": off + i, "split": name, "split_row": i, "reasons": drops[off + i], "record": rec}
                       for i, rec in zip(local_drops, records))
    DatasetDict(clean).save_to_disk(str(tmp_dir / "clean"), num_shards={k: _shards(v) for k, v in clean.items()})
    scratch.remove()
    features = Features({"row": Value("int64"), "split": Value("string"), "split_row": Value("int64"),
                         "reasons": List(Value("string")), "record": source.record_features})
    out = Dataset.from_dict({k: [d[k] for d in dropped] for k in features}, features=features)
    out._fingerprint = f"dropped-{fp}"
    out.save_to_disk(str(tmp_dir / "dropped"), num_shards=_shards(out))
    return {"kept": sum(len(d) for d in clean.values()), "dropped": len(dropped)}


def _hf_dropped(part: Any, columns: dict[str, list[Any]], features: Any) -> Any:
    """The dropped Dataset: ``columns`` plus each dropped row's ``record``; records that cannot be decoded
    (a string cell that is not UTF-8) are carried over as Arrow data, their bytes as read."""
    from datasets import Dataset

    try:
        records = part.to_list() if part is not None else []
    except UnicodeDecodeError:
        from datasets import Features, List, Value

        records, raw = undecodable_cells(part.with_format("arrow")[:])
        features = Features({**features, "raw_cells": List({"column": Value("string"), "bytes": Value("binary")})})
        return Dataset.from_dict({**columns, "record": records, "raw_cells": raw}, features=features)
    return Dataset.from_dict({**columns, "record": records}, features=features)


class _Scratch:
    """Where ``Dataset.map`` writes its cache file: inside this run's generation, removed once the cleaned
    data is saved. Left to itself, datasets writes it next to the source's own files (a save_to_disk
    source folder, or the hub cache): outside --out."""

    def __init__(self, tmp_dir: Path) -> None:
        self.folder = tmp_dir / ".map-cache"

    def __call__(self, name: str) -> str:
        self.folder.mkdir(exist_ok=True)
        return str(self.folder / f"{name}.arrow")

    def remove(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


def _shards(ds: Any) -> int | None:
    """One shard for an empty dataset: datasets writes none by default, and such a folder cannot be
    loaded again (IndexError in load_from_disk, datasets 5.2)."""
    return 1 if len(ds) == 0 else None
