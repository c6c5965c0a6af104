"""A data-only wire format for shard results (the Ray engine): JSON for structure, ``.npy`` arrays for
numbers, packed into one ``.npz`` byte string and read back with ``allow_pickle=False``.

Nothing in it can execute code when it is read: no pickle anywhere (issue #9: a pickle spilled to a
folder another user could write was loaded by the driver). Object arrays are refused when writing.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from pairaudit.batch import BatchResult
from pairaudit.engines.partition import finding_list, findings_of

_ARRAY = "__ndarray__"
_BYTES = "__bytes__"  # an object array of bytes: one uint8 blob + lengths


def _flatten(obj: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(obj, np.ndarray) and obj.dtype.hasobject and obj.ndim == 1 \
            and all(isinstance(b, bytes) for b in obj):
        arrays.append(np.frombuffer(b"".join(obj), dtype=np.uint8))
        arrays.append(np.fromiter((len(b) for b in obj), dtype=np.int64, count=len(obj)))
        return {_BYTES: [len(arrays) - 2, len(arrays) - 1]}
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("object arrays (other than arrays of bytes) cannot travel without pickle")
        arrays.append(obj)
        return {_ARRAY: len(arrays) - 1}
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            raise TypeError(f"only str keys can travel, got {sorted(map(repr, obj))[:3]}")
        if _ARRAY in obj or _BYTES in obj:
            raise TypeError("the keys __ndarray__ and __bytes__ are reserved")
        return {k: _flatten(v, arrays) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_flatten(v, arrays) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"{type(obj).__name__} cannot travel in a shard result")


def _restore(obj: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY}:
            return arrays[obj[_ARRAY]]
        if set(obj) == {_BYTES}:
            blob, lengths = (arrays[i] for i in obj[_BYTES])
            ends = np.cumsum(lengths)
            out = np.empty(len(lengths), dtype=object)
            out[:] = [blob[e - n:e].tobytes() for e, n in zip(ends.tolist(), lengths.tolist())]
            return out
        return {k: _restore(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore(v, arrays) for v in obj]
    return obj


def dumps(obj: Any) -> bytes:
    arrays: list[np.ndarray] = []
    doc = json.dumps(_flatten(obj, arrays), ensure_ascii=True)
    buf = io.BytesIO()
    np.savez(buf, __json__=np.frombuffer(doc.encode("ascii"), dtype=np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)})
    return buf.getvalue()


def loads(data: bytes) -> Any:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        doc = json.loads(z["__json__"].tobytes().decode("ascii"))
        arrays = [z[f"a{i}"] for i in range(len(z.files) - 1)]
    return _restore(doc, arrays)


def result_to_wire(res: BatchResult) -> dict[str, Any]:
    """A batch result without its pairs (texts stay in the worker) as plain data."""
    return {"findings": [finding_list(f) for f in res.findings],
            "metrics": res.metrics, "n_records": res.n_records, "check_errors": res.check_errors,
            "error_counts": res.error_counts, "timings": res.timings, "formats": res.formats}


def result_from_wire(d: dict[str, Any]) -> BatchResult:
    return BatchResult(findings_of([d]), d["metrics"], [], [], d["n_records"], d["check_errors"], d["error_counts"],
                       d["timings"], d["formats"])
