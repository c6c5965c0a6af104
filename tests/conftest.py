"""Shared test fixtures. Models are real (the bundled SmolLM2 tokenizer); the cache is per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
HH = SHARED / "hh-rlhf" / "helpful-base-test.jsonl"
EXAMPLE = ROOT / "examples" / "hh-rlhf-helpful-base-500.jsonl"
CHEAP = ["empty_prompt", "empty_response", "all_padding", "out_of_vocab", "encoding_error", "too_long",
         "truncation_identical", "identical_pair", "near_identical_pair", "prompt_mismatch", "duplicate_pair",
         "contradictory_pair", "length_outlier"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    if "PAIRAUDIT_TEST_CACHE" in os.environ:  # reuse across local runs
        os.environ["PAIRAUDIT_CACHE"] = os.environ["PAIRAUDIT_TEST_CACHE"]
    else:
        os.environ["PAIRAUDIT_CACHE"] = str(tmp_path_factory.mktemp("pairaudit-cache"))


def output_files(out: Path) -> dict[str, bytes]:
    """The outputs of a scan folder by name (files only; pairaudit's own .pairaudit folder excluded)."""
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != ".pairaudit" and p.is_file()}


def write_jsonl(path: Path, records: list[object]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")
    return path


@pytest.fixture
def hh_path() -> Path:
    if not HH.exists():
        pytest.fail(f"{HH} is missing: the tests need ../shared/data beside the checkout")
    return HH


@pytest.fixture(scope="module")
def local_ray():
    """The embedded local Ray of the Ray engine tests (2 CPUs, no dashboard, a small object store), shut down
    when the module's tests are done: CI fails when Ray processes are left running."""
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             object_store_memory=200 * 1024 * 1024)
    yield
    ray.shutdown()
