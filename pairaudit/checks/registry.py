"""The per-pair check registry: every streaming check, in report order.

Whole-dataset stages are registered in :mod:`pairaudit.stages.registry`; :mod:`pairaudit.catalog`
joins both into the list of every check by name.
"""

from __future__ import annotations

from pairaudit.checks import (
    boundary,
    empty,
    encoding,
    identical,
    length,
    malformed,
    mismatch,
    padding,
    prefix,
    repetition,
    trainer,
    vocab,
)
from pairaudit.checks.base import CheckInfo, PairCheck

#: checks the pipeline itself emits (no module computes them pair by pair)
BUILTIN: tuple[CheckInfo, ...] = (malformed.INFO,)

PAIR_CHECKS: tuple[type[PairCheck], ...] = (
    empty.EmptyPrompt, empty.EmptyResponse, padding.AllPadding, vocab.OutOfVocab, encoding.EncodingError,
    length.TooLong, trainer.DroppedByTrainer, length.TruncationIdentical, identical.IdenticalPair,
    identical.NearIdenticalPair, repetition.DegenerateRepetition, mismatch.PromptMismatch,
    prefix.PrefixPair, prefix.SplitWord, boundary.BoundaryMerge,
)
