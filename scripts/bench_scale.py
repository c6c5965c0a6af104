"""Scale benchmark: the same scan through the local engine and through Ray Data on this machine.

    python scripts/bench_scale.py --sizes 100000,1000000 --engines local,ray
    python scripts/bench_scale.py --real --sizes 100000,1000000   # default scan on real-length rows

``--real`` (scripts/bench_real.py): the default scan, every default stage on, on real-length HH rows from the
shared generator, against raw ``tokenizers`` encode_batch of the same texts, with peak RSS growth per row
and the near-duplicate stage against semhash.

For each engine and size (each in a fresh process): wall time per stage, rows/s and peak memory
(the driver's peak RSS; for Ray, the peak of driver + raylet + workers summed, sampled every 0.5 s),
then the scaling exponent b of time ~ rows^b between the smallest and largest size. Runs the
per-pair checks and the exact/length stages (the embedding and reference stages are measured by
bench_dedup.py and bench_score.py: at CPU speed they would take hours at 1M rows).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import ONLY, generate


def _tree_rss_mb(root_pid: int) -> float:
    import psutil

    total = 0
    procs = [psutil.Process(root_pid)]
    try:
        procs += psutil.Process(root_pid).children(recursive=True)
    except psutil.Error:
        pass
    for p in psutil.process_iter(["cmdline"]):  # Ray's raylet/gcs/workers are not our children
        cmd = " ".join(p.info.get("cmdline") or [])
        if "ray::" in cmd or "raylet" in cmd or "gcs_server" in cmd or "default_worker.py" in cmd:
            procs.append(p)
    seen = set()
    for p in procs:
        if p.pid in seen:
            continue
        seen.add(p.pid)
        try:
            total += p.memory_info().rss
        except Exception:  # noqa: BLE001 - processes come and go
            pass
    return total / 2**20


def child(engine: str, path: str, out: str) -> None:
    import resource

    import pairaudit

    peak = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _tree_rss_mb(os.getpid()))
            time.sleep(0.5)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    audit = pairaudit.scan(path, out=out, only=ONLY.split(","), engine=engine, log=lambda m: None)
    dt = time.perf_counter() - t0
    stop.set()
    th.join()
    timings = json.loads((Path(out) / "timings.json").read_text())
    print(json.dumps({"rows": audit.totals["input"], "seconds": dt, "rows_per_s": audit.totals["input"] / dt,
                      "driver_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "tree_peak_rss_mb": peak[0], "timings": timings}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--real", action="store_true", help="default scan on real-length rows (bench_real.py)")
    ap.add_argument("--no-dedup", action="store_true", help="--real: skip the near-duplicate vs semhash part")
    ap.add_argument("--keep-out", action="store_true", help="--real: keep each scan's output folder (workdir/out-N)")
    ap.add_argument("--workers", default="", help="--real: comma list of --workers values, one scan each "
                                                  "(default: the scan's default)")
    ap.add_argument("--tokenizer", default=None, help="--real: training tokenizer of both the scan and raw "
                    "encode_batch (default: the bundled SmolLM2 GGUF; a saved tokenizer folder where it is not installed)")
    ap.add_argument("--scan-options", default=None, help="--real: JSON object of more scan options, e.g. "
                    "'{\"reference\": \"PATH\", \"reference_max_rows\": 1000}'")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--_scan", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--_tokenize", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    import bench_real

    if args._scan:
        bench_real.scan_child(*args._scan)
        return
    if args._tokenize:
        bench_real.tokenizer_child(args._tokenize)
        return
    if args.real:
        if args.tokenizer:
            os.environ["BENCH_TOKENIZER"] = str(Path(args.tokenizer).resolve())
        if args.scan_options:
            os.environ["BENCH_SCAN_OPTIONS"] = json.dumps(json.loads(args.scan_options))
        bench_real.run([int(x) for x in args.sizes.split(",")], Path(args.workdir) if args.workdir else None,
                       not args.no_dedup, [int(w) for w in args.workers.split(",")] if args.workers else None,
                       keep_out=args.keep_out)
        return
    work = Path(args.workdir or tempfile.mkdtemp(prefix="pairaudit-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"cpu cores: {os.cpu_count()}  sizes: {sizes}  workdir: {work}")
    for engine in args.engines.split(","):
        results = {}
        for n in sizes:
            path = work / f"pairs-{n}.jsonl"
            if not path.exists():
                generate(path, n)
            res = subprocess.run([sys.executable, __file__, "--child", engine, str(path), str(work / f"out-{engine}-{n}")],
                                 capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            if res.returncode != 0:
                print(f"{engine} {n}: FAILED\n{res.stderr[-2000:]}")
                break
            r = json.loads(res.stdout.strip().splitlines()[-1])
            results[n] = r
            stages = ", ".join(f"{k}={v:.1f}s" for k, v in r["timings"].items() if k != "total")
            print(f"{engine:5s} {n:>8} rows: {r['seconds']:.0f} s, {r['rows_per_s']:.0f} rows/s, driver peak RSS "
                  f"{r['driver_peak_rss_mb']:.0f} MB, process-tree peak RSS {r['tree_peak_rss_mb']:.0f} MB\n"
                  f"      stages: {stages}")
        if len(results) >= 2:
            (n0, a), (n1, b) = min(results.items()), max(results.items())
            exp = math.log(b["seconds"] / a["seconds"]) / math.log(n1 / n0)
            print(f"{engine}: scaling exponent of wall time {n0}->{n1} rows: {exp:.2f}; per stage: " + ", ".join(
                f"{k}={math.log(max(b['timings'][k], 1e-3) / max(a['timings'][k], 1e-3)) / math.log(n1 / n0):.2f}"
                for k in a["timings"] if k in b["timings"] and a["timings"][k] > 0.05))


if __name__ == "__main__":
    main()
