"""Hostile inputs against `pairaudit scan`: for every case, no traceback, the expected exit code, and
kept + dropped = records (counted independently of pairaudit), with clean/dropped outputs that are
valid UTF-8 and parse back.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/fuzz_inputs.py              # every class, ~2 minutes
    HF_HUB_OFFLINE=1 .venv/bin/python scripts/fuzz_inputs.py --mutants 500 --seed 7

Classes: the issue #9 red-team findings (huge integers, lone surrogates, deep nesting, damaged gzip,
JSON arrays with a hostile item, Parquet folders whose schemas differ, mixed formats, missing
--columns, --out inside the source, bad thresholds) plus invalid UTF-8, BOM/CRLF, truncated lines,
duplicate keys, wrong types, non-object lines, empty files, control and bidi characters, very long
lines, broken conversational messages, bad token ids, and seeded random mutations of real rows from
../shared/data (byte flips, deleted fields, swapped types, spliced lines).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HH = ROOT.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"
UF = ROOT.parent / "shared" / "data" / "ultrafeedback-1k" / "train_clean.jsonl"
GOOD = [{"prompt": f"What is {i} plus {i}?", "chosen": f"It is {2 * i}.", "rejected": f"It is {2 * i + 1}."}
        for i in range(5)]
CHEAP = "empty_prompt,empty_response,all_padding,out_of_vocab,encoding_error,too_long,truncation_identical," \
        "identical_pair,near_identical_pair,prompt_mismatch,duplicate_pair,contradictory_pair,length_outlier"


def lines_file(path: Path, lines: list[bytes | str]) -> tuple[Path, int]:
    data = b"".join((x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass")) + b"\n" for x in lines)
    path.write_bytes(data)
    return path, sum(1 for x in data.split(b"\n") if x.strip())


def j(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def cases(work: Path, rng: random.Random, n_mutants: int) -> list[tuple[str, Callable[[], tuple[Path, int]], list[str], int]]:
    """(name, make -> (source, records or -1 when no outputs are expected), extra args, exit code)."""
    g = [j(x) for x in GOOD]
    out: list[tuple[str, Callable[[], tuple[Path, int]], list[str], int]] = []

    def add(name: str, make: Callable[[], tuple[Path, int]], args: list[str] | None = None, code: int = 0) -> None:
        out.append((name, make, args or [], code))

    add("baseline", lambda: lines_file(work / "base.jsonl", g))
    add("invalid utf-8", lambda: lines_file(work / "utf8.jsonl", [*g, b'{"prompt": "\xff\xfe", "chosen": "a", "rejected": "b"}']))
    add("huge integer", lambda: lines_file(work / "int.jsonl", [*g, '{"prompt": "p", "chosen": "c", "rejected": "r", "n": ' + "7" * 6000 + "}"]))
    add("deep nesting", lambda: lines_file(work / "deep.jsonl", [*g, '{"prompt": ' + "[" * 20000 + "]" * 20000 + "}"]))
    add("lone surrogates", lambda: lines_file(work / "sur.jsonl", [*g, '{"prompt": "\\ud800", "chosen": "x\\udc00", "rejected": "\\udfff y"}']))
    add("escapes and bidi", lambda: lines_file(work / "esc.jsonl", [*g, j({"prompt": "\x1b]0;t\x07", "chosen": "\u202eabc\x00", "rejected": "\x1b[2J"})]))
    add("truncated last line", lambda: lines_file(work / "trunc.jsonl", [*g, '{"prompt": "p", "chosen": "c", "rej']))
    add("BOM and CRLF", lambda: lines_file(work / "bom.jsonl", [b"\xef\xbb\xbf" + g[0].encode() + b"\r", *(x + "\r" for x in g[1:])]))
    add("duplicate keys", lambda: lines_file(work / "dup.jsonl", [*g, '{"prompt": "p", "chosen": "a", "chosen": "b", "rejected": "r"}']))
    wrong = [j({"prompt": v, "chosen": v, "rejected": "r"}) for v in (1, 2.5, True, None, [1], {"a": 1}, [])]
    add("wrong types", lambda: lines_file(work / "types.jsonl", [*g, *wrong]))
    add("non-object lines", lambda: lines_file(work / "nonobj.jsonl", [*g, "[1, 2]", '"text"', "42", "null"]))
    add("empty file", lambda: lines_file(work / "empty.jsonl", []), code=5)  # nothing usable: exit 5 (issue 23)
    add("blank lines only", lambda: lines_file(work / "blank.jsonl", ["", "   ", "\t"]), code=5)
    add("very long line", lambda: lines_file(work / "long.jsonl", [*g, j({"prompt": "p", "chosen": "word " * 400_000, "rejected": "r"})]))
    add("broken messages", lambda: lines_file(work / "conv.jsonl", [
        j({"prompt": [{"role": "user", "content": "hi"}], "chosen": [{"role": "assistant", "content": "yo"}],
           "rejected": [{"role": "assistant", "content": "hey"}]}),
        j({"prompt": [{"role": "user"}], "chosen": [{"role": "assistant", "content": 5}], "rejected": []}),
        j({"prompt": "not a list", "chosen": [{"content": "x"}], "rejected": [None]})]))
    add("bad token ids", lambda: lines_file(work / "ids.jsonl", [
        j({"chosen_input_ids": [1, 2, 3], "rejected_input_ids": [1, 2, 4]}),
        j({"chosen_input_ids": [-5, 10 ** 30], "rejected_input_ids": ["a", 2.5]}),
        j({"chosen_input_ids": [], "rejected_input_ids": None}), j({"chosen_input_ids": [1] * 5000, "rejected_input_ids": [0]})]))
    add("mixed formats", lambda: lines_file(work / "mixed.jsonl", [
        j({"chosen": "\n\nHuman: hi\n\nAssistant: hello", "rejected": "\n\nHuman: hi\n\nAssistant: go"}), *g]))

    def json_array() -> tuple[Path, int]:
        items = [*g, '{"a": ' + "[" * 15000 + "]" * 15000 + "}", '{"n": ' + "1" * 5000 + "}", '"str"',
                 '{"prompt": "\\ud800", "chosen": "c", "rejected": "r"}']
        p = work / "arr.json"
        p.write_text("[" + ",".join(items) + "]", encoding="utf-8")
        return p, len(items)

    add("json array, hostile items", json_array)

    def gz(name: str, cut: float | None, plain: bool = False) -> Callable[[], tuple[Path, int]]:
        def make() -> tuple[Path, int]:
            body = "".join(j({**GOOD[i % 5], "prompt": f"{i} " + "x" * rng.randint(50, 400)}) + "\n" for i in range(300))
            data = body.encode() if plain else gzip.compress(body.encode())
            p = work / name
            p.write_bytes(data if cut is None else data[: int(len(data) * cut)])
            return p, -1 if (cut or plain) else 300
        return make

    add("gzip ok", gz("ok.jsonl.gz", None))
    add("gzip truncated", gz("cut.jsonl.gz", 0.6), code=2)
    add("gzip that is not gzip", gz("plain.jsonl.gz", None, plain=True), code=2)

    def parquet(compatible: bool) -> Callable[[], tuple[Path, int]]:
        def make() -> tuple[Path, int]:
            import polars as pl

            folder = work / f"pq-{compatible}"
            folder.mkdir()
            pl.DataFrame(GOOD[:2]).with_columns(pl.lit(1, pl.Int32).alias("s")).write_parquet(folder / "a.parquet")
            other = pl.lit(2, pl.Int64) if compatible else pl.lit("two")
            pl.DataFrame(GOOD[2:]).with_columns(other.alias("s"), pl.lit("z").alias("t")).write_parquet(folder / "b.parquet")
            return folder, 5 if compatible else -1
        return make

    add("parquet schemas differ", parquet(True))
    add("parquet schemas clash", parquet(False), code=2)
    add("--columns names a missing column", lambda: lines_file(work / "cols.jsonl", g), ["--columns", "prompt=question"], 2)
    add("--set NaN", lambda: lines_file(work / "nan.jsonl", g), ["--set", "length_outlier.max_z=NaN"], 2)
    add("--fail-on garbage", lambda: lines_file(work / "fo.jsonl", g), ["--fail-on", "x>."], 2)
    def inside_source() -> tuple[Path, int]:
        (work / "self").mkdir()
        return lines_file(work / "self" / "p.jsonl", g)[0], -1

    add("--out is the source folder", inside_source, ["--out-is-parent"], 2)

    def mutants() -> tuple[Path, int]:
        real = HH.read_text(encoding="utf-8").splitlines()[:200] + UF.read_text(encoding="utf-8").splitlines()[:100]
        lines: list[bytes] = []
        for _ in range(n_mutants):
            raw = bytearray(rng.choice(real).encode("utf-8"))
            op = rng.randrange(6)
            if op == 0 and raw:  # flip bytes
                for _ in range(rng.randint(1, 4)):
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
            elif op == 1:  # delete or retype a field
                try:
                    obj = json.loads(raw)
                    key = rng.choice(sorted(obj))
                    if rng.random() < 0.5:
                        del obj[key]
                    else:
                        obj[key] = rng.choice([None, 0, [], {}, True, "", " ", "\u200b"])
                    raw = bytearray(j(obj).encode("utf-8", "surrogatepass"))
                except (ValueError, IndexError):
                    pass
            elif op == 2:  # splice two lines
                other = rng.choice(real).encode("utf-8")
                raw = raw[: rng.randrange(len(raw) + 1)] + other[rng.randrange(len(other) + 1):]
            elif op == 3:  # swap sides
                try:
                    obj = json.loads(raw)
                    obj["chosen"], obj["rejected"] = obj.get("rejected"), obj.get("chosen")
                    raw = bytearray(j(obj).encode())
                except ValueError:
                    pass
            elif op == 4:  # insert hostile characters
                pos = rng.randrange(len(raw) + 1)
                raw[pos:pos] = rng.choice([b"\\ud800", b"\\u0000", b"\x1b[31m", "\u202e".encode(), b"\\\\", b'\\"'])
            lines.append(bytes(raw).replace(b"\n", b" "))
        return lines_file(work / "mutants.jsonl", lines)

    add(f"random mutations of real rows (seeded, {n_mutants})", mutants)
    return out


def verify(out: Path, records: int) -> str | None:
    """None when the outputs account for every record and read back; else what is wrong."""
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    t = rep["totals"]
    if records >= 0 and t["input"] != records:
        return f"input {t['input']} != {records} records"
    if t["kept"] + t["dropped"] != t["input"]:
        return f"kept {t['kept']} + dropped {t['dropped']} != input {t['input']}"
    for name in ("clean.jsonl", "dropped.jsonl", "clean.json", "dropped.json"):
        p = out / name
        if p.exists():
            data = p.read_bytes().decode("utf-8")  # raises on invalid UTF-8
            n = len(json.loads(data)) if name.endswith(".json") else sum(1 for x in data.splitlines() if x.strip())
            want = t["kept"] if name.startswith("clean") else t["dropped"]
            if n != want:
                return f"{name} holds {n} records, report says {want}"
            if name.endswith(".jsonl"):
                for x in data.splitlines():
                    if name.startswith("dropped"):
                        json.loads(x)
    return None


def row_check(out: Path, src: Path) -> str | None:
    """Every JSONL record (non-blank line) has exactly one row in scores.parquet, kept or dropped."""
    import polars as pl

    want = [i for i, line in enumerate(src.read_bytes().split(b"\n")) if line.strip()]
    rows = pl.read_parquet(out / "scores.parquet")["row"].to_list()
    if sorted(rows) != want:
        lost = sorted(set(want) - set(rows))[:5]
        return f"rows lost or doubled: {len(rows)} rows for {len(want)} records (missing {lost})"
    return None


def run_case(runner, app, case, victim: Path, snapshot: dict) -> tuple[str | None, int]:
    from fuzz_edges import check, file_limit
    from fuzz_edges import snapshot as out_tree
    from fuzz_surfaces import tree

    before = out_tree(case.out) if case.limit is not None and case.out.exists() else None
    with file_limit(case.limit):
        res = runner.invoke(app, case.argv)
    problem = None
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        problem = f"traceback: {type(res.exception).__name__}: {str(res.exception)[:150]}"
    elif "Traceback" in res.output:
        problem = "traceback in the output"
    elif res.exit_code not in case.allowed:
        problem = f"exit {res.exit_code}, allowed {sorted(case.allowed)}: {res.output.strip()[-200:]}"
    elif case.out is not None and case.records >= 0 and res.exit_code in (0, 3, 4, 5) \
            and (case.out / "report.json").exists():
        try:
            problem = verify(case.out, case.records)
        except (ValueError, KeyError, OSError) as exc:
            problem = f"outputs do not read back: {type(exc).__name__}: {exc}"
    problem = problem or check(case, res.output, res.exit_code, before)
    for name, data in case.protected.items():
        p = case.out / name
        if problem is None and (not p.is_file() or p.read_bytes() != data):
            problem = f"a user file in --out was changed: {name}"
    if problem is None and tree(victim) != snapshot:
        problem = "a file outside --out (the sibling victim folder) was changed"
    return problem, res.exit_code


def surface_cases(work: Path, rng: random.Random, runner, app, scale: float):
    """Issue 23: config files, decisions, report.json, trace run folders, output folders, roles; terminal
    escapes, write limits, long texts, splits (fuzz_edges)."""
    import shutil

    import fuzz_edges as fe
    import fuzz_surfaces as fs

    src, _ = lines_file(work / "five.jsonl", [j(x) for x in GOOD])
    n = lambda k: max(1, int(k * scale))  # noqa: E731
    cases = []
    for c in fs.config_cases(work, src, rng, n(60)) + fs.decisions_cases(work, src, rng, n(50)):
        c.out = work / f"o-{len(cases)}"
        c.argv += ["--out", str(c.out), "-q", "--only", CHEAP]
        cases.append((c, None))
    scanned = work / "scanned"
    runner.invoke(app, ["scan", str(src), "--out", str(scanned), "-q", "--only", CHEAP])
    for c, text in fs.report_cases(work, scanned, rng, n(40)):
        c.out = work / f"o-{len(cases)}"
        c.argv = [c.argv[0], str(c.out), *c.argv[2:]] if len(c.argv) > 1 else [c.argv[0], str(c.out)]

        def prepare(c=c, text=text) -> None:
            shutil.copytree(scanned, c.out, symlinks=True)
            (c.out / "report.json").resolve().write_text(text, encoding="utf-8")
        cases.append((c, prepare))
    data, _ = lines_file(work / "trace-data.jsonl", [j({**GOOD[i % 5], "prompt": f"q {i}?"}) for i in range(40)])
    for c in fs.trace_cases(work, data, rng, n(8)):
        c.out = work / f"o-{len(cases)}"
        c.argv += ["--out", str(c.out)]
        cases.append((c, None))
    for k in range(n(24)):
        what = fs.PLANTS[k % len(fs.PLANTS)]
        c = fs.Case("output folder", f"out: {what}", [], {0, 2}, 5, work / f"o-{len(cases)}")
        c.argv = ["scan", str(src), "--out", str(c.out), "-q", "--only", CHEAP, "--max-length", "99"]

        def prepare(c=c, what=what) -> None:
            runner.invoke(app, ["scan", str(src), "--out", str(c.out), "-q", "--only", CHEAP])
            c.protected = fs.plant(c.out, work / "victim", what, rng)
        cases.append((c, prepare))
    for c, first in fe.terminal_cases(work, rng, n(30)) + fe.write_limit_cases(work, rng, n(30)):
        cases.append((c, None if first is None else lambda first=first: runner.invoke(app, first)))
    cases += [(c, None) for c in fe.long_text_cases(work, rng, n(10)) + fe.split_cases(work, rng, n(12))]
    cases += [(c, None) for c in fe.utf8_container_cases(work, rng, n(12)) + fe.gzip_tail_cases(work, rng, n(12))
              + fe.huge_row_cases(work, rng, n(2))]  # issue 38
    return cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--surfaces", type=float, default=1.0, help="scale of the issue-23 surface cases (0: none)")
    ap.add_argument("--roles", type=int, default=150, help="conversational rows with random roles")
    args = ap.parse_args()
    import fuzz_surfaces as fs
    from typer.testing import CliRunner

    from pairaudit.cli import app

    runner = CliRunner()
    failures = total = 0
    per_surface: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        victim = work / "victim"  # a sibling of every --out: nothing in it may change
        (victim / "sub").mkdir(parents=True)
        (victim / "precious.txt").write_text("do not delete\n")
        (victim / "sub" / "clean.jsonl").write_text("mine\n")
        snapshot = fs.tree(victim)
        rng = random.Random(args.seed)
        print(f"{'case':44} {'exit':>4} {'want':>4} {'input':>6} {'kept':>6} {'drop':>6} {'s':>5}  result")
        all_cases = cases(work, rng, args.mutants)
        if args.roles:
            all_cases.append((f"random roles (seeded, {args.roles})",
                              lambda: lines_file(work / "roles.jsonl", fs.role_rows(rng, args.roles)), [], 0))
        for k, (name, make, extra, want) in enumerate(all_cases):
            src, records = make()
            out = work / f"out-{k}"
            if extra == ["--out-is-parent"]:
                extra, out = [], src.parent
            t0 = time.perf_counter()
            res = runner.invoke(app, ["scan", str(src), "--out", str(out), "-q", "--only", CHEAP, *extra])
            dt = time.perf_counter() - t0
            problem = None
            if res.exception is not None and not isinstance(res.exception, SystemExit):
                problem = f"traceback: {type(res.exception).__name__}: {res.exception}"
            elif "Traceback" in res.output:
                problem = "traceback in the output"
            elif res.exit_code != want:
                problem = f"exit {res.exit_code}, expected {want}: {res.output.strip()[:200]}"
            elif (out / "report.json").exists() and res.exit_code in (0, 2, 3, 4):
                try:
                    problem = verify(out, records)
                except (ValueError, KeyError, OSError) as exc:
                    problem = f"outputs do not read back: {type(exc).__name__}: {exc}"
            t = {}
            if (out / "report.json").exists():
                t = json.loads((out / "report.json").read_text(encoding="utf-8"))["totals"]
            if problem is None and records >= 0 and src.is_file() and src.suffix == ".jsonl" and res.exit_code in (0, 5):
                problem = row_check(out, src)
            if problem is None and fs.tree(victim) != snapshot:
                problem = "a file outside --out (the sibling victim folder) was changed"
            rows = t.get("input", 1) if name.startswith("random") else 1  # each mutated row is a case
            failures += (problem is not None) * rows
            total += rows
            per_surface.setdefault("rows" if name.startswith("random") else "inputs", [0, 0])
            per_surface["rows" if name.startswith("random") else "inputs"][0] += rows
            per_surface["rows" if name.startswith("random") else "inputs"][1] += (problem is not None) * rows
            print(f"{name[:44]:44} {res.exit_code:>4} {want:>4} {t.get('input', '-'):>6} {t.get('kept', '-'):>6} "
                  f"{t.get('dropped', '-'):>6} {dt:5.1f}  {problem or 'ok'}")
        if args.surfaces:
            for case, prepare in surface_cases(work, rng, runner, app, args.surfaces):
                if prepare is not None:
                    prepare()
                t0 = time.perf_counter()
                problem, code = run_case(runner, app, case, victim, snapshot)
                stats = per_surface.setdefault(case.surface, [0, 0])
                stats[0] += 1
                stats[1] += problem is not None
                failures += problem is not None
                total += 1
                if problem is not None or case.name.endswith((" 0", " 0 (report)", " 0 (show)", " 0 (apply)")):
                    print(f"{case.name[:44]:44} {code:>4} {'/'.join(map(str, sorted(case.allowed))):>9} "
                          f"{time.perf_counter() - t0:5.1f}  {problem or 'ok'}")
            import fuzz_edges as fe

            for name, problem in fe.api_problems(work, rng, max(1, int(6 * args.surfaces))):  # issue 38
                stats = per_surface.setdefault("python API", [0, 0])
                stats[0] += 1
                stats[1] += problem is not None
                failures += problem is not None
                total += 1
                if problem is not None:
                    print(f"{name[:44]:44} {'':>4} {'':>9} {'':>5}  {problem}")
    print("\n" + ", ".join(f"{k}: {v[0]} cases, {v[1]} failing" for k, v in per_surface.items()))
    print(f"seed {args.seed}: {total} cases, {failures} failing case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
