"""Benchmark the streaming per-pair scan against raw tokenization, and its memory vs rows.

    python scripts/bench_scan.py                       # 20k-row throughput + 100k/1M memory
    python scripts/bench_scan.py --rows 20000 --memory-rows 20000,200000

Generates synthetic pairs of about 40 / 150 / 150 tokens (prompt / chosen / rejected), then
(a) raw `tokenizers` encode_batch over the same texts and batches, (b) `pairaudit scan` end to end
(per-pair checks + exact/length stages; embedding and model stages off), each size in a fresh
process so peak RSS is its own. Prints one line per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the of and to in is that for it as with was on be by this are or his from at which but have an they "
         "you were her all she there would their we him been has when who will more no if out so said what up its "
         "about into than them can only other new some could time these two may then do first any my now such like "
         "our over man me even most made after also did many before must through back years where much your way "
         "well down should because each just those people how too little state good very make world still own see "
         "men work long get here between both life being under never day same another know while last might us "
         "great old year off come since against go came right used take three model data training answer question "
         "python function value error result example please explain number help thanks reason").split()
ONLY = ("empty_prompt,empty_response,all_padding,out_of_vocab,encoding_error,too_long,truncation_identical,"
        "identical_pair,near_identical_pair,prompt_mismatch,duplicate_pair,contradictory_pair,length_outlier")


def text(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n_words)]
    out, k = [], 0
    while k < len(words):  # sentences of 8-20 words
        m = rng.randint(8, 20)
        s = " ".join(words[k:k + m])
        out.append(s[:1].upper() + s[1:] + rng.choice(".?!."))
        k += m
    return " ".join(out)


def generate(path: Path, rows: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            rec = {"prompt": text(rng, rng.randint(28, 46)), "chosen": text(rng, rng.randint(110, 150)),
                   "rejected": text(rng, rng.randint(110, 150)), "id": i}
            fh.write(json.dumps(rec) + "\n")


def child_raw(path: str, batch: int) -> dict:
    from pairaudit.config import default_cache_dir
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None, default_cache_dir())
    backend = tok.backend_tokenizer
    t0 = time.perf_counter()
    n_rows = n_tokens = 0
    texts: list[str] = []
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    t_read = time.perf_counter()
    for line in lines:
        d = json.loads(line)
        texts += [d["prompt"], d["chosen"], d["rejected"]]
        n_rows += 1
        if len(texts) >= 3 * batch:
            n_tokens += sum(len(e.ids) for e in backend.encode_batch(texts, add_special_tokens=False))
            texts = []
    if texts:
        n_tokens += sum(len(e.ids) for e in backend.encode_batch(texts, add_special_tokens=False))
    dt = time.perf_counter() - t_read
    return {"rows": n_rows, "tokens": n_tokens, "seconds": dt, "rows_per_s": n_rows / dt,
            "tokens_per_s": n_tokens / dt, "read_s": t_read - t0}


def child_scan(path: str, out: str, batch: int) -> dict:
    import pairaudit

    pairaudit.scan(path, out=out, only=ONLY.split(","), batch_size=batch, log=lambda m: None)  # warm caches
    t0 = time.perf_counter()
    audit = pairaudit.scan(path, out=out, only=ONLY.split(","), batch_size=batch, log=lambda m: None)
    dt = time.perf_counter() - t0
    timings = json.loads((Path(out) / "timings.json").read_text())
    return {"rows": audit.totals["input"], "seconds": dt, "rows_per_s": audit.totals["input"] / dt,
            "timings": timings}


def child_scan_once(path: str, out: str, batch: int) -> dict:
    import pairaudit

    t0 = time.perf_counter()
    audit = pairaudit.scan(path, out=out, only=ONLY.split(","), batch_size=batch, log=lambda m: None)
    dt = time.perf_counter() - t0
    return {"rows": audit.totals["input"], "seconds": dt, "rows_per_s": audit.totals["input"] / dt}


def run_child(kind: str, *args: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if res.returncode != 0:
        raise SystemExit(f"child {kind} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=20000, help="rows for the throughput comparison")
    ap.add_argument("--memory-rows", default="100000,1000000", help="comma-separated sizes for the memory curve")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        fn = {"raw": lambda: child_raw(rest[0], int(rest[1])),
              "scan": lambda: child_scan(rest[0], rest[1], int(rest[2])),
              "scan_once": lambda: child_scan_once(rest[0], rest[1], int(rest[2]))}[kind]
        result = fn()
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    work = Path(args.workdir or tempfile.mkdtemp(prefix="pairaudit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"cpu cores: {os.cpu_count()}  workdir: {work}")
    src = work / f"pairs-{args.rows}.jsonl"
    if not src.exists():
        generate(src, args.rows)
    raw = run_child("raw", str(src), str(args.batch_size))
    print(f"raw tokenizers encode_batch: {raw['rows']} rows, {raw['tokens'] / raw['rows']:.0f} tokens/row, "
          f"{raw['rows_per_s']:.0f} rows/s, {raw['tokens_per_s']:.0f} tokens/s")
    scan = run_child("scan", str(src), str(work / "out"), str(args.batch_size))
    print(f"pairaudit scan end to end:   {scan['rows']} rows, {scan['rows_per_s']:.0f} rows/s, "
          f"peak RSS {scan['peak_rss_mb']:.0f} MB")
    print(f"ratio end-to-end / raw tokenization: {scan['rows_per_s'] / raw['rows_per_s']:.2f} (goal >= 0.5)")
    print("stage seconds: " + ", ".join(f"{k}={v:.2f}" for k, v in scan["timings"].items()))
    mem = []
    for n in [int(x) for x in args.memory_rows.split(",") if x]:
        path = work / f"pairs-{n}.jsonl"
        if not path.exists():
            generate(path, n)
        r = run_child("scan_once", str(path), str(work / f"out-{n}"), str(args.batch_size))
        mem.append((n, r))
        print(f"memory: {n} rows -> peak RSS {r['peak_rss_mb']:.0f} MB, {r['rows_per_s']:.0f} rows/s, "
              f"{r['seconds']:.0f} s")
    if len(mem) >= 2:
        (n0, a), (n1, b) = mem[0], mem[-1]
        print(f"peak RSS ratio {n1}/{n0} rows: {b['peak_rss_mb'] / a['peak_rss_mb']:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
