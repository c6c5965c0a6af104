"""Driver memory and the spread of the work on a real multi-node Ray cluster (issue 18).

Starts a cluster on this machine (``ray.cluster_utils.Cluster``: a head without CPUs, ``--nodes`` worker
nodes with ``--cpus`` CPUs and their own object store each) and scans real-length scale sets
(``../shared/tools/make_scale_set.py``; ``--data DIR``: ``DIR/hh-100k.jsonl``, ``hh-1m.jsonl`` (``hh-<N>k`` /
``hh-<N>m``) are reused when they exist, else made there) with ``--engine ray --ray-address`` in a fresh driver process per
size, so the driver's peak RSS (``ru_maxrss``) is that size's alone. Prints per size: rows, seconds, the
driver's peak RSS, the peak RSS of each worker actor (sampled, and each actor's own ``ru_maxrss`` at the end of
the map / reduce / write phases), bytes that reached the driver, bytes shuffled worker to
worker, rows / shards / busy seconds per node and their spread (busiest over least busy node: the map hands
shards to whichever actor is free, docs/scale.md), the near-duplicate cell figures; then the RSS ratio between
the sizes. ``--shards N`` sets ``--ray-shards`` (default: the engine's).

    flock /tmp/pairaudit-heavy.lock env PYTHONPATH=$PWD HF_HUB_OFFLINE=1 \\
        .venv/bin/python scripts/bench_ray.py --sizes 100000,1000000 --data /work/data

Checks: every default check (``--checks default``: near duplicates, flips, preference cycles included; a
report.html too), or the cheap set (``--checks cheap``: per-pair checks, exact duplicates / contradictions,
length outliers).
"""

from __future__ import annotations

import argparse
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCALE = ROOT.parent / "shared" / "tools" / "make_scale_set.py"
HH = ROOT.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"
CHEAP = ["empty_prompt", "empty_response", "all_padding", "out_of_vocab", "encoding_error", "too_long",
         "truncation_identical", "identical_pair", "near_identical_pair", "prompt_mismatch", "duplicate_pair",
         "contradictory_pair", "length_outlier"]


def drive(address: str, source: str, out: str, only: list[str] | None, report: bool, shards: int | None,
          trace: bool = False) -> None:
    """One scan as a Ray driver (``report``: with report.html, as ``pairaudit.scan``; ``shards``: --ray-shards;
    ``trace``: the driver's Python allocations traced per phase, ``_Trace``); prints a JSON line."""
    import psutil

    import pairaudit
    import pairaudit.api
    from pairaudit.engines.memwatch import rss_parts

    proc, stop, phase, phases, owns = psutil.Process(), threading.Event(), ["start"], {}, {}

    def sample() -> None:  # the driver's RSS per phase (MB), and of it its own memory (RSS - RssShmem), every 0.2 s
        while not stop.is_set():
            phases[phase[0]] = max(phases.get(phase[0], 0), round(proc.memory_info().rss / 2**20))
            owns[phase[0]] = max(owns.get(phase[0], 0), round(rss_parts()[0]))
            stop.wait(0.2)

    tracer = _Trace() if trace else None

    def progress(name: str, done: int, total: int | None) -> None:
        if tracer is not None and name != phase[0]:
            tracer.phase_ends(phase[0])
        phase[0] = name

    render = pairaudit.api.render_report

    def render_report(out_dir: Any) -> Any:  # report.html as a phase of its own
        progress("report.html", 0, None)
        return render(out_dir)

    pairaudit.api.render_report = render_report
    threading.Thread(target=sample, daemon=True).start()
    t = time.perf_counter()
    if report:
        audit = pairaudit.scan(source, out=out, only=only, engine="ray", ray_address=address, ray_shards=shards,
                               log=lambda m: None, progress=progress)
    else:  # the scan without report.html
        from pairaudit.config import ScanConfig
        from pairaudit.engines import get_engine
        from pairaudit.pipeline import Scanner

        cfg = ScanConfig(only=only, engine="ray", ray_address=address, ray_shards=shards)
        audit = Scanner(cfg, lambda m: None, progress).run(source, Path(out), engine=get_engine("ray"))
    seconds = time.perf_counter() - t
    stop.set()
    timings = json.loads((Path(out) / "timings.json").read_text(encoding="utf-8"))
    print(json.dumps({"rows": audit.totals["input"], "seconds": round(seconds, 1),
                      "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "driver_phase_peak_rss_mb": phases, "driver_phase_peak_own_mb": owns,
                      "engine": audit.report["stats"]["engine"], "findings": audit.report["totals"],
                      "near": {k: v for k, v in (audit.report["stats"].get("near_duplicates") or {}).items()
                               if k in ("mode", "index", "nlist", "nprobe", "n_candidates", "hybrid_candidate_rows",
                                        "near_duplicate_groups", "near_contradiction_groups")},
                      "timings": {k: v for k, v in timings.items() if k.startswith("ray_")},
                      "driver_trace": tracer.phase_ends(phase[0]) if tracer is not None else None}))


class _Trace:
    """The driver's Python allocations (``tracemalloc``) per phase: the peak while it ran, what was still held at
    its end, and the source lines holding most of that (a memory that grows with the rows or shards shows where)."""

    def __init__(self) -> None:
        import tracemalloc

        tracemalloc.start(4)
        self.phases: dict[str, Any] = {}

    def phase_ends(self, name: str) -> dict[str, Any]:
        import tracemalloc

        held, peak = tracemalloc.get_traced_memory()
        top = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        sites = [f"{st.size / 2**20:.1f} MB {st.count} blocks: " + " < ".join(
            f"{Path(fr.filename).name}:{fr.lineno}" for fr in st.traceback[:4]) for st in top.statistics("traceback")[:8]]
        self.phases[name] = {"peak_mb": round(peak / 2**20, 1), "held_mb": round(held / 2**20, 1), "top": sites}
        tracemalloc.reset_peak()
        return self.phases


def scale_set(folder: Path, n: int) -> Path:
    """``folder/hh-<n>.jsonl`` (hh-100k, hh-1m, ...), built with the shared generator when absent (into a temp
    name, then moved: other jobs never read half a file)."""
    name = f"hh-{n // 1_000_000}m" if n % 1_000_000 == 0 else f"hh-{n // 1000}k" if n % 1000 == 0 else f"hh-{n}"
    path = folder / f"{name}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        subprocess.run([sys.executable, str(SCALE), str(HH), str(n), str(tmp)], check=True, stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def _watch_actors(peaks: dict[int, float], stop: threading.Event) -> None:
    """Sample the RSS of this cluster's shard actors: processes below this one (its raylets' workers), so another
    Ray cluster on the machine is never counted."""
    import psutil

    me = psutil.Process()
    while not stop.is_set():
        for p in me.children(recursive=True):
            try:
                if any("ShardActor" in part for part in p.cmdline() or ()):
                    peaks[p.pid] = max(peaks.get(p.pid, 0.0), p.memory_info().rss / 2**20)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        stop.wait(0.5)


def _print_parts(t: dict[str, float], k: int) -> None:
    """Actor ``k``'s peaks told apart (sampled every 0.05 s in the actor, ``engines/memwatch.py``): its own memory
    (RSS - RssShmem) and the object store's pages it had mapped (RssShmem), per phase and reduce operation."""
    def by_name(part: str) -> dict[str, float]:  # ray_actor:<k>:<part>_mb:<phase or op> -> {name: MB}
        head = f"ray_actor:{k}:{part}_mb:"
        return {key[len(head):]: v for key, v in t.items() if key.startswith(head)}

    own, shared, after = by_name("peak_own"), by_name("peak_shared"), by_name("own_after")
    if not own:
        return
    phases = [p for p in ("map", "reduce", "write") if p in own]
    print(f"  actor {k} own memory (RSS - RssShmem) / object store pages (RssShmem), sampled peaks (MB): "
          + ", ".join(f"{p} {own[p]:.0f}/{shared.get(p, 0):.0f}" for p in phases)
          + "; reduce ops (own/store peaks, own after the op) "
          + ", ".join(f"{op[len('reduce.'):]} {own[op]:.0f}/{shared.get(op, 0):.0f} {after.get(op, 0):.0f}"
                      for op in sorted(own) if op.startswith("reduce.")))


def _print_spread(t: dict[str, float], nodes: list[str]) -> None:
    """How evenly the work went: the busiest node's busy seconds over the least busy one's, and shards per node."""
    busy = [t[node + ":seconds"] for node in nodes]
    if len(busy) < 2:
        return
    scan = [t.get(node + ":map_seconds", float("nan")) for node in nodes]
    print(f"  per-node spread: busy max {max(busy):.1f} s / min {min(busy):.1f} s = x{max(busy) / max(min(busy), 1e-9):.3f}"
          f" ({max(busy) - min(busy):.1f} s apart); map (shard scans alone) "
          + "/".join(f"{x:.1f}" for x in scan) + " s; shards per node "
          + "/".join(f"{t[node + ':shards']:.0f}" for node in nodes)
          + "; rows per node " + "/".join(f"{t[node + ':rows']:,.0f}" for node in nodes))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,200000")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--cpus", type=int, default=1, help="CPUs per worker node")
    ap.add_argument("--checks", choices=("default", "cheap"), default="default")
    ap.add_argument("--data", default="/work/data",
                    help="folder of the scale sets hh-100k.jsonl, hh-1m.jsonl, ... (built there when absent)")
    ap.add_argument("--no-report", action="store_true", help="scan without report.html")
    ap.add_argument("--store-mb", type=int, default=1024, help="object store per worker node")
    ap.add_argument("--shards", type=int, default=0,
                    help="--ray-shards of the scans (default: the engine's, SHARDS_PER_ACTOR per actor)")
    ap.add_argument("--trace-driver", action="store_true",
                    help="trace the driver's Python allocations per phase (tracemalloc: slower driver)")
    ap.add_argument("--drive", nargs=7, metavar=("ADDRESS", "SOURCE", "OUT", "ONLY", "REPORT", "SHARDS", "TRACE"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.drive:
        address, source, out, only, report, shards, trace = args.drive
        drive(address, source, out, only.split(",") if only != "default" else None, report == "1", int(shards) or None,
              trace == "1")
        return
    import ray
    from ray.cluster_utils import Cluster

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    only = CHEAP if args.checks == "cheap" else None
    work = Path(tempfile.mkdtemp(prefix="18-bench-ray-", dir="/tmp"))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                            "object_store_memory": 200 * 2**20})
    for _ in range(args.nodes):
        cluster.add_node(num_cpus=args.cpus, object_store_memory=args.store_mb * 2**20)
    cluster.wait_for_nodes()
    print(f"cluster: head (0 CPUs, object store 200 MB) + {args.nodes} worker nodes x {args.cpus} CPU, object store "
          f"{args.store_mb} MB each; checks: {','.join(only or ['default'])}; "
          f"report.html: {'no' if args.no_report else 'yes'}")
    results = []
    try:
        for n in (int(x) for x in args.sizes.split(",")):
            src = scale_set(Path(args.data), n)
            peaks: dict[int, float] = {}
            stop = threading.Event()
            watcher = threading.Thread(target=_watch_actors, args=(peaks, stop), daemon=True)
            watcher.start()
            proc = subprocess.run([sys.executable, __file__, "--drive", cluster.address, str(src),
                                   str(work / f"out-{n}"), ",".join(only or ["default"]), "0" if args.no_report else "1",
                                   str(args.shards), "1" if args.trace_driver else "0"],
                                  capture_output=True, text=True)
            stop.set()
            watcher.join()
            if proc.returncode:
                sys.exit(f"scan of {n} rows failed:\n{proc.stderr[-3000:]}")
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res["actor_peak_rss_mb"] = sorted(round(v, 1) for v in peaks.values())
            results.append(res)
            t = res["timings"]
            nodes = sorted({k.rsplit(":", 1)[0] for k in t if k.startswith("ray_node:")})
            print(f"\n{res['rows']:>9,} rows  {res['seconds']:>7.1f} s  driver peak RSS {res['driver_peak_rss_mb']:.0f} MB"
                  f"  actors peak RSS {res['actor_peak_rss_mb']} MB")
            print("  driver peak RSS per phase (MB, sampled): "
                  + ", ".join(f"{k} {v}" for k, v in res["driver_phase_peak_rss_mb"].items()))
            print("  driver own memory per phase (RSS - RssShmem, MB, sampled): "
                  + ", ".join(f"{k} {v}" for k, v in res["driver_phase_peak_own_mb"].items()))
            for name, tr in (res.get("driver_trace") or {}).items():
                print(f"  driver Python allocations, {name}: peak {tr['peak_mb']} MB, held at its end {tr['held_mb']} MB; "
                      "most held by: " + "; ".join(tr["top"][:5]))
            print(f"  bytes to driver {t['ray_bytes_to_driver'] / 2**20:.2f} MB"
                  f" ({t['ray_bytes_to_driver'] / res['rows']:.1f} B/row), from driver "
                  f"{t['ray_bytes_from_driver'] / 2**20:.2f} MB, shuffled worker to worker "
                  f"{t['ray_bytes_shuffled'] / 2**20:.2f} MB ({t['ray_bytes_shuffled'] / res['rows']:.1f} B/row)")
            print(f"  phases: map {t.get('ray_pipeline', 0):.1f} s, reduce {t.get('ray_reduce', 0):.1f} s, "
                  f"write {t.get('ray_write', 0):.1f} s")
            actors = sorted({int(k.split(":")[1]) for k in t if k.startswith("ray_actor:")})
            for k in actors:  # each actor's own ru_maxrss at the end of each phase (absent before issue 37)
                print(f"  actor {k}: {t.get(f'ray_actor:{k}:shards', float('nan')):.0f} shards, "
                      f"{t.get(f'ray_actor:{k}:seconds', float('nan')):.1f} s busy; peak RSS at the end of each phase (MB, ru_maxrss): "
                      + ", ".join(f"{ph} {t[f'ray_actor:{k}:peak_rss_mb:{ph}']:.0f}" for ph in ("map", "reduce", "write")
                                  if f"ray_actor:{k}:peak_rss_mb:{ph}" in t))
                ops = sorted(key.split(":peak_rss_mb:")[1] for key in t
                             if key.startswith(f"ray_actor:{k}:peak_rss_mb:reduce."))
                if ops:  # each reduce operation's own peak (VmHWM reset at its start: its inputs included)
                    print(f"  actor {k} peak RSS of each reduce operation (MB): "
                          + ", ".join(f"{op[len('reduce.'):]} {t[f'ray_actor:{k}:peak_rss_mb:{op}']:.0f}" for op in ops))
                _print_parts(t, k)
            for node in nodes:
                print(f"  {node.replace('ray_', '').replace(':', ' ')}: {t[node + ':rows']:,.0f} rows, "
                      f"{t[node + ':shards']:.0f} shards, {t[node + ':seconds']:.1f} s busy (scan, stage work, write)")
            _print_spread(t, nodes)
            print(f"  near duplicates: {json.dumps(res['near'])}; cell groups {t.get('ray_near:cell_groups', 0):.0f}, "
                  f"rows sent to groups {t.get('ray_near:rows_sent_to_groups', 0):,.0f} "
                  f"({t.get('ray_near:rows_sent_to_groups', 0) / res['rows']:.2f} a row), "
                  f"edges across groups {t.get('ray_near:edges_across_groups', 0):.0f}")
            print(f"  totals {json.dumps(res['findings'])}")
            (work / f"out-{n}").exists() and subprocess.run(["rm", "-rf", str(work / f"out-{n}")], check=False)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    if len(results) >= 2:
        a, b = results[0], results[-1]
        pa, pb = max(a["actor_peak_rss_mb"] or [0]), max(b["actor_peak_rss_mb"] or [0])
        if pa:
            print(f"\nlargest actor peak RSS (sampled) {pb:.0f} MB at {b['rows']:,} rows vs {pa:.0f} MB at "
                  f"{a['rows']:,} rows: x{pb / pa:.3f} for x{b['rows'] / a['rows']:.1f} rows")
        print(f"\ndriver peak RSS {b['driver_peak_rss_mb']:.0f} MB at {b['rows']:,} rows vs "
              f"{a['driver_peak_rss_mb']:.0f} MB at {a['rows']:,} rows: x{b['driver_peak_rss_mb'] / a['driver_peak_rss_mb']:.3f}"
              f" for x{b['rows'] / a['rows']:.1f} rows")


if __name__ == "__main__":
    main()
