"""Which source rows the trainer trains on, in its dataset index order, and their token lengths.

:func:`trainer_rows` is the one place that answers "trainer dataset index i is source row r". A
``transformers.Trainer`` fed the file keeps every record in order (JSONL: physical line numbers of the
non-blank lines). TRL's ``DPOTrainer`` filters rows: :func:`token_lengths` runs the scan's own emulation
of the installed TRL's preprocessing (:mod:`pairaudit.trainer.profiles` profiles and ``DPOTokenizer``: prompt
extraction for implicit-prompt data, EOS, tokenization, and the row filter ``len(prompt_ids) >= max_length``
under ``keep_start``; pinned against TRL's own ``DPOTrainer._prepare_dataset`` by
tests/test_trl_differential.py and tests/test_trace.py).

The trainer then truncates ``prompt + completion`` to ``max_length`` (``DataCollatorForPreference``: keep the
start for ``keep_start``, the end for ``keep_end``); :func:`kept_lengths` gives the surviving token counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import ConfigError, InputError
from pairaudit.trace.settings import TraceSettings

TEXT_KEYS = ("prompt", "chosen", "rejected")


@dataclass
class TokenLengths:
    """Per source record (``rows``): TRL's prompt / chosen / rejected token counts (completions include EOS;
    -1 where the row could not be tokenized) and whether the trainer keeps the row."""

    rows: np.ndarray
    prompt: np.ndarray
    chosen: np.ndarray
    rejected: np.ndarray
    kept: np.ndarray
    errors: dict[int, str] = field(default_factory=dict)
    max_length: int | None = None
    truncation_mode: str = "keep_start"

    def lookup(self, row: int) -> dict[str, Any] | None:
        pos = int(np.searchsorted(self.rows, row))
        if pos >= len(self.rows) or self.rows[pos] != row:
            return None
        p, c, r = int(self.prompt[pos]), int(self.chosen[pos]), int(self.rejected[pos])
        out: dict[str, Any] = {"prompt": p, "chosen": c, "rejected": r, "kept_by_trainer": bool(self.kept[pos])}
        if p >= 0:
            pc, cc = kept_lengths(p, c, self.max_length, self.truncation_mode)
            pr, rr = kept_lengths(p, r, self.max_length, self.truncation_mode)
            out.update(prompt_kept=min(pc, pr), chosen_kept=cc, rejected_kept=rr,
                       truncated=bool(cc < c or rr < r or pc < p or pr < p))
        if row in self.errors:
            out["error"] = self.errors[row]
        return out


def kept_lengths(prompt: int, completion: int, max_length: int | None, mode: str) -> tuple[int, int]:
    """(prompt, completion) tokens left after the collator cuts ``prompt + completion`` to ``max_length``."""
    if max_length is None or prompt + completion <= max_length:
        return prompt, completion
    if mode == "keep_end":
        c = min(completion, max_length)
        return max_length - c, c
    p = min(prompt, max_length)
    return p, max_length - p


def token_lengths(source: str | Path, settings: TraceSettings, *, tokenizer_obj: Any = None,
                  batch_size: int = 1000) -> TokenLengths:
    """TRL token counts and keep/drop of every source record, computed by the scan's own trainer-profile
    tokenization (:mod:`pairaudit.trainer.profiles`, :class:`pairaudit.trainer.tokenizer.DPOTokenizer`: the installed TRL's
    preprocessing, pinned against TRL's own code by tests/test_trl_differential.py)."""
    from pairaudit.batch import BatchProcessor
    from pairaudit.config import ScanConfig
    from pairaudit.datatypes import Finding
    from pairaudit.io.readers import open_source
    from pairaudit.trainer import profiles
    from pairaudit.trainer.tokenizer import DPOTokenizer

    st = profiles.settings("trl", max_length=settings.max_length, truncation_mode=settings.truncation_mode)
    cfg = st.apply(ScanConfig(tokenizer=settings.tokenizer, columns=dict(settings.columns or {}),
                              only=["malformed_record"]))
    proc = BatchProcessor.for_config(cfg, columns=cfg.columns, trainer=st)
    if tokenizer_obj is not None:
        proc.tok = DPOTokenizer(tokenizer_obj, None, trainer=st)
    rows: list[int] = []
    lens: list[tuple[int, int, int]] = []
    errors: dict[int, str] = {}
    for batch in open_source(source).batches(batch_size):
        found: list[Finding] = []
        pairs, encoded = proc.encode(proc.to_pairs(batch, found), found)
        for f in found:
            if f.row not in errors:
                errors[f.row] = f"TRL cannot train on this row: {f.detail}"
                rows.append(f.row)
                lens.append((-1, -1, -1))
        for pair, enc in zip(pairs, encoded):
            rows.append(pair.row)
            lens.append(_lengths(pair, enc))
    order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
    arr = np.asarray(lens, dtype=np.int64).reshape(-1, 3)[order]
    rows_arr = np.asarray(rows, dtype=np.int64)[order]
    kept = np.array([p >= 0 and st.keeps(int(p)) for p in arr[:, 0]], dtype=bool)
    return TokenLengths(rows_arr, arr[:, 0], arr[:, 1], arr[:, 2], kept, errors, st.max_length, st.truncation_mode)


def _lengths(pair: Any, enc: Any) -> tuple[int, int, int]:
    """Token counts of one pair: the trainer's encoding, or the ids of a pre-tokenized row as they are."""
    if enc is not None:
        return len(enc.prompt_ids), len(enc.chosen_ids), len(enc.rejected_ids)
    ids = getattr(pair, "ids", None) or {}
    if "chosen_input_ids" in ids and "rejected_input_ids" in ids:
        return (len(ids.get("prompt_input_ids") or []), len(ids["chosen_input_ids"]), len(ids["rejected_input_ids"]))
    return -1, -1, -1


def record_rows(source: str | Path) -> np.ndarray:
    """Row numbers of every record of the source (what a plain ``transformers.Trainer`` indexes)."""
    from pairaudit.io.readers import open_source

    out = [r.row for batch in open_source(source).batches(5000) for r in batch]
    return np.asarray(out, dtype=np.int64)


def trainer_rows(source: str | Path, settings: TraceSettings, *, tokenizer_obj: Any = None,
                 lengths: TokenLengths | None = None) -> np.ndarray:
    """Source row of each trainer dataset index, for the trainer named by ``settings.trainer``."""
    trainer = settings.trainer
    if trainer == "transformers":
        return record_rows(source)
    if trainer != "trl-dpo":
        raise ConfigError(f"trainer {trainer!r} is not known", expected="trl-dpo or transformers")
    if lengths is None:
        lengths = token_lengths(source, settings, tokenizer_obj=tokenizer_obj)
    if lengths.errors and not lengths.kept.any():
        first = next(iter(lengths.errors.items()))
        raise InputError(f"no row of {source} survives TRL's preprocessing; row {first[0]}: {first[1]}")
    return lengths.rows[lengths.kept]
