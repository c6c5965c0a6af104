"""Real-length scale benchmark of the default scan (``scripts/bench_scale.py --real``). Prints numbers,
asserts nothing.

    flock /tmp/pairaudit-heavy.lock .venv/bin/python scripts/bench_scale.py --real --sizes 100000
    nice -n 10 .venv/bin/python scripts/bench_scale.py --real --sizes 1000000 --no-dedup   # hours on 2 cores

In one run, on sets built by the shared generator (``../shared/tools/make_scale_set.py``: real HH helpful-base
test transcripts recombined, ~1.6 KB a row):

* per size, in a fresh process on a cold embedding cache (the one-off static-model distillation and the
  tokenizer conversion are reused from the user cache): a default ``pairaudit scan`` (every default stage on),
  wall time, rows/s, peak RSS (``ru_maxrss``: file pages the process mapped count too; and sampled every
  0.5 s with the ``--workers`` processes added) and the stage
  timings of timings.json;
* raw ``tokenizers`` ``encode_batch`` of the same rows' prompt / chosen / rejected with the same tokenizer
  (batches of 1,000 rows, reading excluded): rows/s, and the scan's ratio to it;
* peak RSS growth per row between the smallest and the largest size;
* the near-duplicate stage against semhash on the same planted HH set (``bench_dedup.py``'s hybrid and semhash
  designs: paraphrase recall, unrelated rows merged, wall time, ratio).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT.parent / "shared" / "tools" / "make_scale_set.py"
HH = ROOT.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"
SEP = "\n\nAssistant:"


def build_set(n: int, work: Path) -> Path:
    path = work / f"hh-{n}.jsonl"
    if not path.exists():
        subprocess.run([sys.executable, str(GENERATOR), str(HH), str(n), str(path)], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def cold_cache(folder: Path) -> Path:
    """A cache with the user cache's static model and converted tokenizer but no embeddings."""
    from pairaudit.config import default_cache_dir

    user = default_cache_dir()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for sub in ("static-embedders", "tokenizers"):
        if (user / sub).exists():
            (folder / sub).symlink_to(user / sub)
    return folder


def scan_child(path: str, out: str) -> None:
    import psutil

    import pairaudit

    proc, peak, stop = psutil.Process(), [0, 0, 0], threading.Event()
    phase, phases = ["start"], {}  # peak RSS (MB) per progress phase, this process and its workers together
    anon_phases: dict[str, int] = {}  # the same for anonymous memory only (RssAnon: no mapped file pages)

    def anon(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def sample() -> None:
        while not stop.is_set():
            rss = proc.memory_info().rss
            tree, tree_anon = rss, anon(proc.pid)
            for child in proc.children(recursive=True):  # --workers processes
                try:
                    tree += child.memory_info().rss
                    tree_anon += anon(child.pid)
                except psutil.Error:
                    pass
            peak[0], peak[1], peak[2] = max(peak[0], rss), max(peak[1], tree), max(peak[2], tree_anon)
            phases[phase[0]] = max(phases.get(phase[0], 0), round(tree / 2**20))
            anon_phases[phase[0]] = max(anon_phases.get(phase[0], 0), round(tree_anon / 2**20))
            time.sleep(0.5)

    def progress(name: str, done: int, total: int | None) -> None:
        phase[0] = name

    threading.Thread(target=sample, daemon=True).start()
    t0 = time.perf_counter()
    workers = int(os.environ["BENCH_WORKERS"]) if os.environ.get("BENCH_WORKERS") else None
    tok = {"tokenizer": os.environ["BENCH_TOKENIZER"]} if os.environ.get("BENCH_TOKENIZER") else {}
    tok |= json.loads(os.environ.get("BENCH_SCAN_OPTIONS") or "{}")
    audit = pairaudit.scan(path, out=out, progress=progress, log=lambda m: None, workers=workers, **tok)
    dt = time.perf_counter() - t0
    stop.set()
    timings = json.loads((Path(out) / "timings.json").read_text())
    print(json.dumps({"rows": audit.totals["input"], "seconds": dt, "rows_per_s": audit.totals["input"] / dt,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "sampled_peak_rss_mb": peak[0] / 2**20, "tree_peak_rss_mb": peak[1] / 2**20,
                      "phase_peak_rss_mb": phases, "anon_peak_mb": peak[2] / 2**20,
                      "phase_peak_anon_mb": anon_phases, "timings": timings}))


def tokenizer_child(path: str) -> None:
    from pairaudit.config import default_cache_dir
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(os.environ.get("BENCH_TOKENIZER") or None, default_cache_dir())
    backend = tok.backend_tokenizer
    rows = 0
    seconds = 0.0
    batch: list[str] = []

    def run() -> None:
        nonlocal seconds
        t = time.perf_counter()
        backend.encode_batch(batch, add_special_tokens=False)
        seconds += time.perf_counter() - t
        batch.clear()

    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            c, r = d["chosen"], d["rejected"]
            k = c.rfind(SEP) + len(SEP)
            batch += [c[:k], c[k:], r[k:]]
            rows += 1
            if len(batch) >= 3000:
                run()
    if batch:
        run()
    print(json.dumps({"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds}))


def _child(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "bench_scale.py"), *args],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(sizes: list[int], work: Path | None, dedup: bool, workers: list[int | None] | None = None,
        keep_out: bool = False) -> None:
    """``workers``: one default scan per value (None: the scan's default), each on its own cold cache; the first
    value's scan is the one compared across sizes."""
    work = work or Path(tempfile.mkdtemp(prefix="pairaudit-real-"))
    work.mkdir(parents=True, exist_ok=True)
    workers = workers or [None]
    print(f"cpu cores: {os.cpu_count()}  sizes: {sizes}  workers: {workers}  workdir: {work}  (other jobs may run "
          f"beside; load average {os.getloadavg()[0]:.1f})")
    results = {}
    for n in sizes:
        path = build_set(n, work)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PAIRAUDIT_CACHE": str(cold_cache(work / f"cache-{n}"))}
        tok = _child(["--_tokenize", str(path)], env)
        for w in workers:
            env_w = {**env, "PAIRAUDIT_CACHE": str(cold_cache(work / f"cache-{n}-{w}")), "BENCH_WORKERS": str(w or "")}
            scan = _child(["--_scan", str(path), str(work / f"out-{n}")], env_w)
            if not keep_out:
                shutil.rmtree(work / f"out-{n}", ignore_errors=True)
            results.setdefault(n, scan)
            t = scan["timings"]
            stages = ", ".join(f"{k}={v:.1f}s" for k, v in sorted(t.items()) if k != "total" and v >= 0.5
                               and not k.endswith(("_encoded", "_cached", "_computed", "_planned", "_unplanned")))
            print(f"{n:>8} rows, --workers {w or 'default'}: default scan {scan['seconds']:.0f} s = "
                  f"{scan['rows_per_s']:.0f} rows/s; raw tokenizers encode_batch {tok['rows_per_s']:.0f} rows/s; ratio "
                  f"{scan['rows_per_s'] / tok['rows_per_s']:.2f}x; peak RSS {scan['peak_rss_mb']:.0f} MB (with the "
                  f"worker processes {scan['tree_peak_rss_mb']:.0f} MB); load average {os.getloadavg()[0]:.1f}"
                  f"\n          {stages}\n          peak RSS per phase, with the workers (MB): "
                  + ", ".join(f"{k} {v}" for k, v in scan["phase_peak_rss_mb"].items())
                  + f"\n          of it anonymous memory (RssAnon: no mapped file pages), peak {scan['anon_peak_mb']:.0f} MB: "
                  + ", ".join(f"{k} {v}" for k, v in scan["phase_peak_anon_mb"].items()), flush=True)
    if len(results) >= 2:
        (n0, a), (n1, b) = min(results.items()), max(results.items())
        for key, what in (("peak_rss_mb", "this process"), ("tree_peak_rss_mb", "with the worker processes")):
            growth = (b[key] - a[key]) * 2**20 / (n1 - n0)
            print(f"peak RSS growth {n0} -> {n1} rows ({what}): {growth / 1024:.2f} KB per row")
    if dedup:
        bench_dedup = Path(__file__).resolve().parent / "bench_dedup.py"
        proc = subprocess.run([sys.executable, str(bench_dedup), "--designs", "hybrid,semhash", "--no-flips"],
                              capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        print(proc.stdout.strip() or proc.stderr[-2000:])
        walls = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            if parts and parts[0] in ("hybrid", "semhash"):
                walls[parts[0]] = float(parts[5])
        if len(walls) == 2:
            print(f"near-duplicate stage (hybrid) / semhash wall time: {walls['hybrid'] / walls['semhash']:.1f}x")
