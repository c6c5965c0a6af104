"""The local engine's process pool (``--workers N``): batches read here, checked and observed in N processes.

The main process reads the source batch by batch and hands the batches, in turn, to N worker processes, each
of which normalises, tokenizes and checks its batch (``BatchProcessor``) and runs every stage's ``observe`` on
its own stage instances; it sends back the batch result without its texts and each stage's ``export_state``
(compact per-row arrays), which the main process merges **in row order** (``Stage.absorb_state``, the
contract the Ray engine also uses), so the stages finalize on exactly what an in-process scan observes and the
outputs are the same. Each worker holds at most two batches (one it works on, one waiting), so memory stays
that of a few batches.

Workers are fresh interpreters (``python -m pairaudit.engines.pool``; nothing of the caller's script is
re-run, unlike multiprocessing's ``spawn``) with one thread each for BLAS and tokenizers: the pool is the
parallelism. Messages travel over anonymous pipes between the scan's own processes
(``multiprocessing.connection``, which pickles them); nothing is written to or read from disk in between.

A stage that scores rows with a model of its own keeps the model in the main process (a copy per worker would
cost its memory N times): the flip stage's workers tokenize the pairs for the reference (and policy) model and
the main process scores them as it absorbs the batches in row order (``Stage.in_worker``), so
``--reference-max-rows`` counts rows in input order as in one process, and on a GPU machine the model works
while the workers read and check the next batches. The pool is not used (the scan runs in this process) for
sources that cannot be reopened elsewhere (in-memory objects, ``Source.shardable``) and when a stage's model
reads the texts (a reward model: ``Stage.one_process_reason``), which stay in the workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.config import usable_cpus

if TYPE_CHECKING:
    from pairaudit.io.readers import Source
    from pairaudit.pipeline import Scanner

WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1",
              "TOKENIZERS_PARALLELISM": "false"}


def default_workers() -> int:
    """Worker processes when ``--workers`` is not given: the CPUs this process may use."""
    return usable_cpus()


def pool_blocker(scanner: Scanner, source: Source) -> str | None:
    """Why this scan runs in one process despite ``--workers`` (None: the pool can run it)."""
    if not getattr(source, "shardable", True):
        return "the source is an in-memory object that other processes cannot read"
    for stage in scanner.stages:
        why = stage.one_process_reason()
        if why:
            return why
    return None


# -- worker side --------------------------------------------------------------------------------
class _Worker:
    def __init__(self, cfg: Any, trainer: Any, fmt: str | None, stage_specs: list[tuple[str, list[str]]],
                 cache_dir: str, splits: list[tuple[str, int, int]] | None, cache_off: bool = False,
                 hashes: dict[tuple[str, int, float], str] | None = None) -> None:
        from pairaudit.batch import BatchProcessor
        from pairaudit.cache import start_scan
        from pairaudit.config import Context
        from pairaudit.io.formats import parse_columns
        from pairaudit.models.loading import remember_hashes
        from pairaudit.plan import build_plan
        from pairaudit.stages.registry import load_stage

        remember_hashes(hashes or {})  # the model files the main process hashed are not read again here
        plan = build_plan(cfg)
        self.logs: list[str] = []
        self.done: dict[str, int] = {}
        start_scan(self.logs.append, off=cache_off)  # the main process found the cache unwritable: no retry here
        self.ctx = Context(cfg, Path(cache_dir), self.logs.append, params=plan.params, progress=self._progress,
                           splits=splits)
        self.processor = BatchProcessor(cfg, plan, parse_columns(cfg.columns), fmt, Path(cache_dir), trainer)
        self.stages = []
        for path, enabled in stage_specs:
            cls = load_stage(path)
            assert cls is not None, path
            stage = cls(self.ctx, set(enabled))
            stage.in_worker()  # e.g. the main process scores with the stage's model
            self.stages.append(stage)

    def _progress(self, phase: str, done: int, total: int | None) -> None:
        self.done[phase] = max(self.done.get(phase, 0), done)  # counts within one batch (stages reset per export)

    def run(self, records: list[Any]) -> dict[str, Any]:
        self.done, self.logs[:] = {}, []
        res = self.processor.process(records)
        errors: dict[str, str] = {}
        states: dict[str, Any] = {}
        for stage in self.stages:
            name = type(stage).__name__
            t = time.perf_counter()
            if res.pairs:
                try:
                    stage.observe(res.pairs, res.encoded)
                except Exception as exc:  # noqa: BLE001 - the main process fails the stage, as in-process
                    errors[name] = f"{type(exc).__name__}: {exc}"
            states[name] = stage.export_state()
            res.timings[f"stage:{name}"] = res.timings.get(f"stage:{name}", 0.0) + time.perf_counter() - t
        res.pairs, res.encoded = [], []  # the texts stay here
        return {"result": res, "states": states, "errors": errors, "progress": dict(self.done),
                "logs": list(self.logs), "tokenizer": self.processor.tok is not None}


def _serve(fd_in: int, fd_out: int) -> None:
    from multiprocessing.connection import Connection

    from pairaudit.errors import PairauditError

    src, dst = Connection(fd_in, writable=False), Connection(fd_out, readable=False)
    worker = None
    while True:
        msg = src.recv()
        if msg is None:
            return
        try:
            if worker is None:
                worker = _Worker(*msg)
                dst.send({"ready": True})
            else:
                dst.send(worker.run(msg))
        except PairauditError as exc:  # sent back as data: some subclasses cannot be rebuilt from their message
            kind = type(exc).__name__ if type(exc).__name__ in _REBUILT else "PairauditError"
            dst.send({"error": (kind, exc.what, exc.expected, exc.fix)})


_REBUILT = ("PairauditError", "InputError", "ConfigError", "ModelError")


# -- main side ----------------------------------------------------------------------------------
class _Proc:
    """One worker process and its two pipes."""

    def __init__(self, init: tuple) -> None:
        from multiprocessing.connection import Connection

        r_in, w_in = os.pipe()
        r_out, w_out = os.pipe()
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds the pairaudit package
        env = {**os.environ, **{k: v for k, v in WORKER_ENV.items() if k not in os.environ or k == "TOKENIZERS_PARALLELISM"},
               "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "pairaudit.engines.pool", str(r_in), str(w_out)],
                                     pass_fds=(r_in, w_out), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        os.close(r_in)
        os.close(w_out)
        self.dst, self.src = Connection(w_in, readable=False), Connection(r_out, writable=False)
        self.dst.send(init)

    def recv(self) -> dict[str, Any]:
        try:
            out = self.src.recv()
        except (EOFError, OSError):
            out = None
        if out is None:
            from pairaudit.errors import ModelError

            code = self.proc.wait()
            self.err.seek(0)
            tail = self.err.read().decode("utf-8", "replace").strip().splitlines()[-3:]
            raise ModelError(f"a worker process stopped unexpectedly (exit code {code})"
                             + (": " + " | ".join(tail) if tail else ""),
                             fix="rerun with --workers 1 (everything in one process)")
        if "error" in out:
            from pairaudit import errors

            kind, what, expected, fix = out["error"]
            raise getattr(errors, kind)(what, expected=expected, fix=fix)
        return out

    def close(self, kill: bool) -> None:
        try:
            if kill:
                self.proc.kill()
            else:
                self.dst.send(None)
        except OSError:
            pass
        self.dst.close()
        self.src.close()
        if kill:
            self._reap()
        else:  # a worker told to stop exits on its own (its interpreter's teardown): the scan goes on meanwhile
            threading.Thread(target=self._reap, name="pairaudit-pool-reap", daemon=True).start()

    def _reap(self) -> None:
        self.proc.wait()
        self.err.close()


def run_pool(scanner: Scanner, first: list[Any], batches: Iterator[list[Any]], parts: list[Path], workers: int,
             report: Callable[[int, int], None]) -> None:
    """``first`` and every further batch through ``workers`` processes, merged here in row order;
    ``report(rows merged, rows read)`` after each merged batch."""
    from pairaudit.cache import cache_report

    specs = [(f"{type(s).__module__}:{type(s).__name__}", sorted(s.enabled)) for s in scanner.stages]
    if scanner.processor.to_pairs(first, []):  # the format, fixed from the first batch as in-process, and a
        scanner.processor.load_tokenizer()  # tokenizer that cannot load fails here
    scanner.first_batch_sanity(first)
    from dataclasses import replace

    from pairaudit.models.device import resolved_if_known

    # the workers get the device this process resolved ("auto" -> cpu/cuda): they need not import torch to ask
    cfg = replace(scanner.cfg, device=resolved_if_known(scanner.cfg.device))
    from pairaudit.models.loading import known_hashes

    init = (cfg, scanner.trainer, scanner.processor.fmt, specs, str(scanner.ctx.cache_dir), scanner.ctx.splits,
            cache_report() is not None, known_hashes())
    procs = [_Proc(init) for _ in range(workers)]
    ok = False
    try:
        for p in procs:
            p.recv()  # ready (or the error that stopped it)
        _feed(scanner, procs, _chain(first, batches), parts, report)
        ok = True
    finally:
        for p in procs:
            p.close(kill=not ok)


def _feed(scanner: Scanner, procs: list[_Proc], batches: Iterator[list[Any]], parts: list[Path],
          report: Callable[[int, int], None]) -> None:
    """Batch k goes to worker k mod N; each worker gets its next batch as soon as its result is taken, before
    the result is merged; results are merged in batch (= row) order."""
    done: dict[str, int] = {}
    seen_logs: set[str] = set()
    queued: list[int] = []
    read = 0
    for p in procs:
        records = next(batches, None)
        if records is None:
            break
        p.dst.send(records)
        queued.append(len(records))
        read += len(records)
    k = 0
    while queued:
        p = procs[k % len(procs)]
        out = p.recv()
        queued.pop(0)
        records = next(batches, None)
        if records is not None:
            p.dst.send(records)
            queued.append(len(records))
            read += len(records)
        _absorb(scanner, out, parts, done, seen_logs)
        report(scanner.n_input, read)
        k += 1


def _chain(first: list[Any], rest: Iterator[list[Any]]) -> Iterator[list[Any]]:
    yield first
    yield from rest


def _absorb(scanner: Scanner, out: dict[str, Any], parts: list[Path], done: dict[str, int],
            seen_logs: set[str]) -> None:
    if out["tokenizer"] and scanner.processor.tok is None:
        scanner.processor.load_tokenizer()  # report.json's assumptions name it, as in-process
    for msg in out["logs"]:
        if msg not in seen_logs:  # every worker says the same things once (e.g. which embedder)
            seen_logs.add(msg)
            scanner.log(msg)
    scanner.absorb(out["result"], parts, observe=False)
    by_name = {type(s).__name__: s for s in scanner.stages}
    for name, state in out["states"].items():
        stage = by_name.get(name)
        if stage is None:  # failed earlier
            continue
        if name in out["errors"]:
            scanner.stage_failed(stage, RuntimeError(out["errors"][name]))
            continue
        try:  # the main process's part of the stage's work (e.g. the reference model scoring the batch)
            stage.absorb_state(state)
        except Exception as exc:  # noqa: BLE001 - as a stage failing in one process: recorded, the scan goes on
            scanner.stage_failed(stage, exc)
    for phase, n in out["progress"].items():
        if phase != "read":
            done[phase] = done.get(phase, 0) + n
            scanner.ctx.progress(phase, done[phase], None)


if __name__ == "__main__":  # a worker: python -m pairaudit.engines.pool FD_IN FD_OUT
    _serve(int(sys.argv[1]), int(sys.argv[2]))
