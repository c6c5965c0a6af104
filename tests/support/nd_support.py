"""Helpers for the near-duplicate tests: running the stage, and caches that share the distilled static
model (distilled once per session, ~20 s) but start with no embeddings."""

from __future__ import annotations

import os
from pathlib import Path

from pairaudit.config import Context, ScanConfig
from pairaudit.datatypes import Finding, Pair, StageResult
from pairaudit.stages.exact import CONTRADICTION_INFO
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.stage import NearDuplicateStage


def session_cache() -> Path:
    return Path(os.environ["PAIRAUDIT_CACHE"])


def fresh_cache(path: Path) -> Path:
    """An empty cache folder whose static-embedders/ is the session's (no re-distillation)."""
    shared = session_cache() / "static-embedders"
    shared.mkdir(parents=True, exist_ok=True)
    path.mkdir(parents=True, exist_ok=True)
    link = path / "static-embedders"
    if not link.exists():
        link.symlink_to(shared, target_is_directory=True)
    return path


def run_stage(pairs: list[Pair], cache: Path, mode: str = "auto", batch: int = 128, progress: list | None = None,
              enabled: set[str] | None = None, dup: dict | None = None, **cfg: object
              ) -> tuple[StageResult, NearDuplicateStage]:
    """``dup``: near_duplicate_pair thresholds that replace the declared ones (``--set near_duplicate_pair.K=V``)."""
    ctx = Context(config=ScanConfig(embed_mode=mode, **cfg), cache_dir=cache,  # type: ignore[arg-type]
                  params={"near_duplicate_pair": {**NEAR_DUPLICATE_INFO.thresholds, **(dup or {})},
                          "contradictory_pair": dict(CONTRADICTION_INFO.thresholds),
                          "near_identical_pair": {"min_cosine": 0.98}})
    if progress is not None:
        ctx.progress = lambda phase, done, total: progress.append((phase, done, total))
    stage = NearDuplicateStage(ctx, enabled or {"near_duplicate_pair", "contradictory_pair"})
    for lo in range(0, len(pairs), batch):
        stage.observe(pairs[lo:lo + batch], None)
    return stage.finalize(), stage


def by_check(findings: list[Finding], check: str) -> dict[int, Finding]:
    return {f.row: f for f in findings if f.check == check}


def to_pairs(rows: list[tuple[str, str, str]]) -> list[Pair]:
    return [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r) for i, (p, c, r) in enumerate(rows)]
