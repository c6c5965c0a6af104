"""JSON text, one record at a time: parse a line, cut a JSON array into its items, and stream the
lines of a gzip file that may be damaged. A bad record is an error *for that record*; it never stops
the records around it."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from typing import Any


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return d


def parse_json_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """Parse one JSON record: (object, error, field). Errors say what was found and how to fix it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, (f"invalid UTF-8 at byte {exc.start} (0x{raw[exc.start]:02x}); "
                      "fix: re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"), None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        return None, f"duplicate key {exc.args[0]!r} in one object; fix: keep one value per key", str(exc.args[0])
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        truncated = exc.pos >= len(stripped) or (stripped.startswith("{") and not stripped.endswith("}"))
        where = "(the line ends before the object closes: truncated?)" if truncated else f"at column {exc.colno}"
        return None, f"invalid JSON: {exc.msg} {where}; fix: repair or remove this line", None
    except RecursionError:
        return None, "JSON nested too deeply (Python's parser gives up near 1,000 levels); fix: flatten it", None
    except ValueError as exc:  # e.g. an integer literal longer than Python's int-string limit (4,300 digits)
        return None, f"invalid JSON value: {str(exc)[:160]}; fix: store such values as strings", None
    if not isinstance(obj, dict):
        return None, (f"record holds a JSON {type(obj).__name__}, expected an object with "
                      "chosen/rejected fields"), None
    return obj, None, None


# a JSON string (with escapes) or one structural character
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.S)


def array_items(data: bytes) -> list[bytes] | None:
    """The raw bytes of each item of a top-level JSON array, found without parsing the items (so a
    pathological item, too deep or with a huge number, is cut out and parsed on its own); None when
    ``data`` is not a well-bracketed array."""
    start = len(data) - len(data.lstrip())
    if data[start:start + 1] != b"[":
        return None
    items, depth, item_start = [], 0, start + 1
    for m in _TOKEN.finditer(data, start):
        tok = m.group()
        if tok[:1] == b'"':
            continue
        if tok in (b"[", b"{"):
            depth += 1
        elif tok in (b"]", b"}"):
            depth -= 1
            if depth == 0:
                last = data[item_start:m.start()].strip()
                if last:
                    items.append(last)
                return items if not data[m.end():].strip() else None
        elif depth == 1:  # a comma between two items
            items.append(data[item_start:m.start()].strip())
            item_start = m.end()
    return None


GZIP_MAGIC = b"\x1f\x8b"


def gzip_lines(path: str, damage: list[str], notes: list[str] | None = None) -> Iterator[bytes]:
    """Lines (with their endings) of a gzip file, decompressed incrementally so that every complete
    line before a damaged or truncated spot is returned. Concatenated gzip members are read in turn.
    On damage the last partial line is returned as is and a description is appended to ``damage``.
    Bytes after the last member that do not start another member are ignored, as ``gzip -dc`` ignores
    them ("trailing garbage ignored"): every row is read, and ``notes`` gets a line saying so."""
    import os

    with open(path, "rb") as fh:
        dec = zlib.decompressobj(wbits=31)
        pending, offset = b"", 0
        while True:
            chunk = fh.read(1 << 16)
            if not chunk:
                if not dec.eof and (offset or pending):
                    damage.append(f"the gzip stream ends early after {offset:,} compressed bytes (truncated file)")
                break
            offset += len(chunk)
            out, dec, trailing, error = _inflate(dec, chunk)
            pending += out
            lines = pending.split(b"\n")
            pending = lines.pop()
            for line in lines:
                yield line + b"\n"
            if error:
                damage.append(f"the gzip data is damaged near compressed byte {offset - len(chunk):,}: {error}")
                break
            if trailing is not None:
                n = os.path.getsize(path) - (offset - trailing)
                if notes is not None:
                    notes.append(f"{n:,} byte(s) after the last gzip member were ignored (not gzip data: "
                                 "gzip -dc ignores them too, 'trailing garbage ignored')")
                break
        if pending:
            yield pending


def _inflate(dec: Any, data: bytes) -> tuple[bytes, Any, int | None, str | None]:
    """Feed ``data`` to the member being read and the members that follow it: (output, the decompressor
    now reading, the number of trailing bytes of ``data`` that start no member (None: all were gzip), the
    zlib error if the data is damaged)."""
    out = []
    while True:
        try:
            out.append(dec.decompress(data))
        except zlib.error as exc:
            return b"".join(out), dec, None, str(exc)
        if not (dec.eof and dec.unused_data):
            return b"".join(out), dec, None, None
        data = dec.unused_data  # another gzip member follows, or bytes that start none
        if not GZIP_MAGIC.startswith(data[:2]) or not data.strip(b"\0"):
            return b"".join(out), dec, len(data), None
        dec = zlib.decompressobj(wbits=31)


def json_bytes(obj: Any) -> bytes:
    """``obj`` as UTF-8 JSON text, always valid UTF-8: a lone surrogate (legal in JSON as ``\\udc00``, not
    encodable in UTF-8) is written as its JSON escape, so the record reads back unchanged."""
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "backslashreplace")
