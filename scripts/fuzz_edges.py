"""More hostile surfaces for scripts/fuzz_inputs.py (issue 23, after stop 26): control and bidi characters
in paths, --out names, column names, option names and config values (none may reach the terminal raw);
a real file-size limit (RLIMIT_FSIZE: a write fails with EFBIG, as a full disk fails with ENOSPC) while
a scan writes (exit 2 and --out left byte for byte as it was, or a complete scan); very long texts (the
pieces path of trainer/long_text.py); `--split all` over splits whose column types differ. Each case is a
fuzz_surfaces.Case; :func:`check` adds the checks these surfaces need to fuzz_inputs.run_case's."""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
from collections.abc import Iterator
from pathlib import Path

from fuzz_surfaces import Case

#: what a hostile name carries: clear the screen, set the window title, ring, rewrite the line, reverse
#: what follows, a C1 CSI, backspaces, an isolate
CONTROL = ["\x1b[2J", "\x1b]0;PWNED\x07", "\x07", "\rFAKE", "\u202e", "\x9b31m", "\x08\x08", "\u2066", "\x1b[31m"]
RAW = ["\x1b", "\x07", "\rFAKE", "\u202e", "\x9b", "\x08", "\u2066"]
CHEAP = "identical_pair,near_identical_pair,too_long,empty_response,duplicate_pair"


def hostile(rng: random.Random) -> str:
    return "".join(rng.choice(CONTROL) + rng.choice(["a", "-", " ", "é", ""]) for _ in range(rng.randint(1, 3)))


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def snapshot(d: Path) -> dict[str, bytes | str]:
    """Every entry under ``d``: file bytes, where a link leads, or "dir"."""
    out: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            out[str(p.relative_to(d))] = f"-> {os.readlink(p)}" if p.is_symlink() else \
                (p.read_bytes() if p.is_file() else "dir")
    return out


def terminal_cases(work: Path, rng: random.Random, n: int) -> list[tuple[Case, list[str] | None]]:
    """(case, argv of a scan to run first or None); every case plants control characters (Case.planted)."""
    out: list[tuple[Case, list[str] | None]] = []
    kinds = ["scan", "scan -q", "missing column", "bad option", "bad --set", "config value", "missing source",
             "show", "report", "out is the source"]
    for k in range(n):
        h, what = hostile(rng), kinds[k % len(kinds)]
        d = work / f"term-{k}{h if rng.random() < 0.5 else ''}"
        d.mkdir()
        hc = h.replace(" ", "")  # --columns strips the spaces around a name
        good, bad = (f"good{hc}", f"bad{hc}") if rng.random() < 0.6 else ("chosen", "rejected")
        rows = [{"prompt": f"Q {i}{h if rng.random() < 0.3 else ''}?", good: f"answer {i}",
                 bad: "no" if i % 2 else f"answer {i}"} for i in range(5)]
        src = jsonl(d / f"pairs{h if rng.random() < 0.7 else ''}.jsonl", rows)
        o = work / f"o-term-{k}{h if rng.random() < 0.7 else ''}"
        cols = ["--columns", f"chosen={good},rejected={bad}"] if good != "chosen" else []
        scan = ["scan", str(src), "--out", str(o), "--only", CHEAP, *cols]
        first = None
        argv, allowed, records = scan, {0, 4}, 5
        if what == "scan -q":
            argv = [*scan, "-q"]
        elif what == "missing column":
            argv, allowed, records = [*scan, "--columns", f"prompt=gone{h}"], {2}, -1
        elif what == "bad option":
            argv, allowed, records = [*scan, f"--bo{h}gus"], {2}, -1
        elif what == "bad --set":
            argv, allowed, records = [*scan, "--set", f"identical_pair.x{h}=1"], {2}, -1
        elif what == "config value":
            cfg = d / "cfg.toml"
            cfg.write_text(f'trainer = "trl{h}"\n[checks.identical_pair]\n"act{h}ion" = "drop"\n', encoding="utf-8")
            argv, allowed, records = [*scan, "--config", str(cfg)], {2}, -1
        elif what == "missing source":
            argv, allowed, records = ["scan", str(d / f"nothing{h}.jsonl"), "--out", str(o)], {2}, -1
        elif what in ("show", "report"):
            first = [*scan, "-q"]
            argv, allowed, records = [what, str(o), *(["1"] if what == "show" else [])], {0}, -1
        elif what == "out is the source":
            argv, allowed, records = ["scan", str(src), "--out", str(src)], {2}, -1
        c = Case("terminal", f"terminal {k} ({what})", argv, allowed, records, o)
        c.planted = RAW
        out.append((c, first))
    return out


def write_limit_cases(work: Path, rng: random.Random, n: int) -> list[tuple[Case, list[str] | None]]:
    """A scan under a file-size limit, over an earlier scan's folder (which must stay as it was when the scan
    fails) or into a new one (nothing may be left)."""
    out: list[tuple[Case, list[str] | None]] = []
    rows = [{"prompt": f"Question {i}?", "chosen": f"{random.Random(i).getrandbits(40_000):x}",
             "rejected": "no" if i != 3 else f"{random.Random(3).getrandbits(40_000):x}"} for i in range(30)]
    src = jsonl(work / "limit-src.jsonl", rows)
    pq = work / "limit-src.parquet"
    import polars as pl

    pl.DataFrame(rows).write_parquet(pq, compression="uncompressed")
    for k in range(n):
        source = src if k % 2 else pq
        o = work / f"o-limit-{k}"
        scan = ["scan", str(source), "--out", str(o), "-q", "--only", CHEAP]
        first = scan if rng.random() < 0.7 else None
        c = Case("write limit", f"write limit {k}", [*scan, "--max-length", str(rng.randint(50, 400))], {0, 2, 4},
                 30, o)
        c.limit = int(10 ** rng.uniform(2.5, 6.3))  # ~300 bytes .. 2 MB
        out.append((c, first))
    return out


def long_text_cases(work: Path, rng: random.Random, n: int) -> list[Case]:
    words = "the of and to in is was for that on with as by at from it an be this are or".split()
    out = []
    for k in range(n):
        rows = []
        for i in range(6):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(15_000, 60_000))) if rng.random() < 0.4 \
                else ("ha" * 40 + " ") * rng.randint(900, 3000) if rng.random() < 0.2 else f"answer {i}"
            rej = body if rng.random() < 0.3 else body[: len(body) - rng.randint(0, 9)] if rng.random() < 0.5 else "no"
            rows.append({"prompt": f"Q {i}?", "chosen": body, "rejected": rej})
        src = jsonl(work / f"long-{k}.jsonl", rows)
        o = work / f"o-long-{k}"
        # exit 5 when every row ends up dropped (all six can be identical pairs: seed 31, found by the checker)
        out.append(Case("long texts", f"long texts {k}", ["scan", str(src), "--out", str(o), "-q", "--only", CHEAP],
                        {0, 4, 5}, 6, o))
    return out


def split_cases(work: Path, rng: random.Random, n: int) -> list[Case]:
    import datasets

    kinds = [lambda i: i, lambda i: i + 0.5, lambda i: f"s{i}", lambda i: [i], lambda i: None, lambda i: {"a": i},
             lambda i: bool(i % 2)]
    out = []
    for k in range(n):
        parts = {}
        for name in ("train", "test", "validation")[: rng.randint(2, 3)]:
            x = rng.choice(kinds)
            same = rng.randrange(5)
            parts[name] = datasets.Dataset.from_list(
                [{"prompt": f"{name} {i}?", "chosen": f"a {i}", "rejected": f"a {i}" if i == same else "no", "x": x(i)}
                 for i in range(5)])
        dd = work / f"splits-{k}"
        datasets.DatasetDict(parts).save_to_disk(str(dd))
        o = work / f"o-splits-{k}"
        out.append(Case("splits", f"splits {k}", ["scan", str(dd), "--split", "all", "--out", str(o), "-q", "--only",
                                                   CHEAP], {0, 2, 4}, 5 * len(parts), o))
    return out


@contextlib.contextmanager
def file_limit(limit: int | None) -> Iterator[None]:
    """This process may write no file past ``limit`` bytes while the block runs (Python ignores SIGXFSZ:
    the write fails with EFBIG)."""
    if limit is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def check(case: Case, output: str, code: int, before: dict[str, bytes | str] | None) -> str | None:
    """The checks of these surfaces: no planted character raw in the output; a scan that failed under a
    file-size limit left --out exactly as it was (or created nothing)."""
    raw = [r for r in case.planted if r in output]
    if raw:
        return f"raw control characters reached the terminal: {raw!r}"
    if case.limit is not None and code == 2 and case.out is not None:
        if before is not None and snapshot(case.out) != before:
            return "a scan that failed while writing changed --out"
        if before is None and case.out.exists() and any(case.out.iterdir()):
            return f"a scan that failed while writing left {sorted(p.name for p in case.out.iterdir())}"
    return None


# ------------------------------------------------------------------------------------- issue 38 surfaces
BAD_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80abc", b"ok\xe2\x82"]


def utf8_container_cases(work: Path, rng: random.Random, n: int) -> list[Case]:
    """Parquet files and save_to_disk folders whose string cells hold invalid UTF-8 (any column, any row):
    each such row is one malformed row, the others are read."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = []
    for k in range(n):
        cols: dict[str, list[bytes]] = {c: [f"{c} {i} text".encode() for i in range(8)]
                                        for c in ("prompt", "chosen", "rejected")}
        for _ in range(rng.randint(1, 4)):
            c, i = rng.choice(list(cols)), rng.randrange(8)
            cell = cols[c][i]
            at = rng.randrange(len(cell) + 1)
            cols[c][i] = cell[:at] + rng.choice(BAD_UTF8) + cell[at:]
        table = pa.table({c: pa.array(v, pa.binary()).view(pa.string()) for c, v in cols.items()})
        if k % 2:
            src = work / f"utf8-{k}"
            datasets.Dataset(datasets.table.InMemoryTable(table)).save_to_disk(str(src))
        else:
            src = work / f"utf8-{k}.parquet"
            pq.write_table(table, src)
        o = work / f"o-utf8-{k}"
        out.append(Case("invalid UTF-8 in containers", f"utf8 {k}", ["scan", str(src), "--out", str(o), "-q",
                                                                     "--only", CHEAP], {0, 5}, 8, o))
    return out


def gzip_tail_cases(work: Path, rng: random.Random, n: int) -> list[Case]:
    """Gzip files of 1-3 members followed by bytes that start no member (text, zeros, random): every row is
    read, as gzip -dc reads them."""
    import gzip

    out = []
    for k in range(n):
        rows = [json.dumps({"prompt": f"Q {i}?", "chosen": f"yes {i}", "rejected": f"no {i}"}) + "\n"
                for i in range(rng.randint(3, 12))]
        cuts = sorted(rng.sample(range(1, len(rows)), min(len(rows) - 1, rng.randint(0, 2))))
        parts = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]
        tail = rng.choice([b"GARBAGE", b"\0" * rng.randint(1, 600), bytes(rng.randrange(32, 256) for _ in range(99)),
                           b"x" * 70_000])
        src = work / f"tail-{k}.jsonl.gz"
        src.write_bytes(b"".join(gzip.compress("".join(p).encode()) for p in parts) + tail)
        o = work / f"o-tail-{k}"
        out.append(Case("gzip trailing bytes", f"gzip tail {k}", ["scan", str(src), "--out", str(o), "-q",
                                                                  "--only", CHEAP], {0}, len(rows), o))
    return out


def huge_row_cases(work: Path, rng: random.Random, n: int, mb: float = 1.0) -> list[Case]:
    """One response of ``mb`` MB among ordinary rows, through every default check (a size CI can afford)."""
    words = "the of and to in is was for that on with as by at from it an be this are or".split()
    out = []
    for k in range(n):
        rows = [{"prompt": f"Question {i}?", "chosen": f"A careful answer {i}.", "rejected": f"No {i}."}
                for i in range(8)]
        size = int(mb * 1e6)
        rows[rng.randrange(8)][rng.choice(["chosen", "rejected", "prompt"])] = \
            " ".join(rng.choice(words) for _ in range(size // 3))[:size]
        src = jsonl(work / f"huge-{k}.jsonl", rows)
        o = work / f"o-huge-{k}"
        out.append(Case("huge rows", f"huge row {k}", ["scan", str(src), "--out", str(o), "-q"], {0, 4}, 8, o))
    return out


def api_problems(work: Path, rng: random.Random, n: int) -> list[tuple[str, str | None]]:
    """The Python API: DataFrames and Arrow tables with duplicated or mistyped columns, and row numbers the
    decisions file refuses (fractional, non-finite, strings, booleans) given to Review. (case, problem)."""
    import pandas as pd

    import pairaudit
    from pairaudit.errors import ConfigError, PairauditError
    from pairaudit.review import Review

    out: list[tuple[str, str | None]] = []
    only = CHEAP.split(",")
    for k in range(n):
        df = pd.DataFrame([{"prompt": f"Q {i}?", "chosen": f"answer {i}", "rejected": f"no {i}"} for i in range(6)])
        df["chosen"] = df["chosen"].astype(object)
        bad = rng.sample(range(6), rng.randint(1, 3))
        for i in bad:
            df.at[i, "chosen"] = rng.choice([5, 2.5, b"bad \xff bytes", ["a"], {"x": 1}, True])
        name, problem = f"mistyped cells {k}", None
        try:
            t = pairaudit.scan(df, work / f"o-api-{k}", only=only).report["totals"]
            if (t["input"], t["dropped"]) != (6, len(bad)):
                problem = f"totals {t}, expected 6 rows and {len(bad)} dropped"
        except Exception as exc:  # noqa: BLE001 - any error is the finding
            problem = f"{type(exc).__name__}: {str(exc)[:150]}"
        out.append((name, problem))
        dup = df.copy()
        dup.insert(rng.randrange(4), rng.choice(["chosen", "rejected", "prompt"]), "x", allow_duplicates=True)
        try:
            pairaudit.scan(dup, work / f"o-dup-{k}", only=only)
            out.append((f"duplicate columns {k}", "scanned a frame with two columns of one name"))
        except PairauditError as exc:
            out.append((f"duplicate columns {k}", None if exc.exit_code == 2 else f"exit {exc.exit_code}"))
        except Exception as exc:  # noqa: BLE001
            out.append((f"duplicate columns {k}", f"{type(exc).__name__}: {str(exc)[:150]}"))
        rv = Review(work / f"o-api-{k}", reviewer="fuzz")
        for row in rng.sample([3.7, 8.0, "6", True, float("nan"), float("inf"), -1, None, 1e300, "1e3"], 4):
            try:
                rv.decide(row, "drop")
                out.append((f"row {row!r}", "accepted"))
            except ConfigError:
                out.append((f"row {row!r}", None))
            except Exception as exc:  # noqa: BLE001
                out.append((f"row {row!r}", f"{type(exc).__name__}: {str(exc)[:150]}"))
    return out
