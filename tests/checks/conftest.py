"""The real bundled SmolLM2 tokenizer, loaded once, with the trainer semantics a check needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer import profiles
from pairaudit.trainer.tokenizer import DPOTokenizer


@pytest.fixture(scope="session")
def smol() -> tuple[Any, Any]:
    return load_tokenizer(None)


@pytest.fixture(scope="session")
def make_tok(smol: tuple[Any, Any]) -> Callable[..., DPOTokenizer]:
    """``make_tok(trainer="trl", max_length=..., ...)``: a DPOTokenizer under that trainer's rules."""
    def make(trainer: str = "trl", **limits: Any) -> DPOTokenizer:
        return DPOTokenizer(*smol, trainer=profiles.settings(trainer, **limits))
    return make


@pytest.fixture(scope="session")
def tok(make_tok: Callable[..., DPOTokenizer]) -> DPOTokenizer:
    """Today's TRL defaults (max_length 1024, keep_start)."""
    return make_tok()


@pytest.fixture(scope="session")
def keyword_tok(smol: tuple[Any, Any]) -> DPOTokenizer:
    """No trainer named: pairaudit's keyword profile (TRL 0.20-0.27 rules), as the older tests built it."""
    return DPOTokenizer(*smol)
