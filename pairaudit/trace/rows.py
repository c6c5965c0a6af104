"""Which source rows the trainer trains on, in its dataset index order, and their token lengths.

:func:`trainer_rows` is the one place that answers "trainer dataset index i is source row r". A
``transformers.Trainer`` fed the file keeps every record in order (JSONL: physical line numbers of the
non-blank lines). TRL 1.x ``DPOTrainer`` filters rows; this module reproduces ``DPOTrainer._prepare_dataset``
of TRL 1.16 (``trl/trainer/dpo_trainer.py``), step by step:

1. ``extract_prompt`` (``trl/data_utils.py``) when the dataset has no ``prompt`` column: the prompt is the
   longest common prefix of chosen and rejected (characters for strings, messages for lists), minus one
   when the character before the first difference is a space; identical or prefix pairs keep only their
   last element as completion (TRL's off-by-one, reproduced on purpose);
2. for non-conversational data, EOS is appended to chosen and rejected unless they already end with it;
3. ``prompt``, ``prompt + chosen`` and ``prompt + rejected`` are tokenized (``trl.data_utils._tokenize``:
   ``tokenizer(text=...)`` with its special tokens for text; ``apply_chat_template(tokenize=True,
   add_generation_prompt=True for the prompt)`` for messages, with the row's ``tools`` and
   ``chat_template_kwargs``); the prompt length is the shorter common prefix of the prompt ids with each
   full sequence (``common_prefix_length``);
4. ``if args.max_length is not None and args.truncation_mode == "keep_start"``: rows are kept only when
   ``len(prompt_ids) < max_length`` - a prompt of exactly ``max_length`` tokens is dropped.

The trainer then truncates ``prompt + completion`` to ``max_length`` (``DataCollatorForPreference``: keep the
start for ``keep_start``, the end for ``keep_end``); :func:`kept_lengths` gives the surviving token counts.
Another module (issue #10, ``pairaudit.tokenize`` trainer profiles) may later provide the same emulation;
:func:`trainer_rows` is the single function to point at it.
"""

from __future__ import annotations

import json
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


def extract_prompt(example: dict[str, Any]) -> dict[str, Any]:
    """``trl.data_utils.extract_prompt`` of TRL 1.16, reproduced (including its behaviour on prefix pairs)."""
    chosen, rejected = example["chosen"], example["rejected"]
    idx = None
    for idx in range(min(len(chosen), len(rejected))):  # noqa: B007 - idx is used after the loop, as in TRL
        if chosen[idx] != rejected[idx]:
            if chosen[idx - 1] == " ":
                idx -= 1
            break
    if idx is None:
        raise ValueError("chosen or rejected is empty: TRL's extract_prompt fails on this row")
    return {**example, "prompt": chosen[:idx], "chosen": chosen[idx:], "rejected": rejected[idx:]}


def is_conversational(example: dict[str, Any]) -> bool:
    for key in ("prompt", "chosen", "rejected", "completion", "messages"):
        if key in example:
            v = example[key]
            return isinstance(v, list) and bool(v) and isinstance(v[0], dict) and "role" in v[0]
    return False


def common_prefix_length(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class TrlTokenizer:
    """TRL 1.x's preprocessing of one dataset, batch by batch (the first record decides like TRL does)."""

    def __init__(self, tokenizer: Any, columns: dict[str, str] | None = None) -> None:
        self.tok = tokenizer
        self.columns = columns or {}
        self.extract: bool | None = None
        self.add_eos: bool | None = None

    def _prepare(self, rec: dict[str, Any]) -> dict[str, Any]:
        ex = {k: rec.get(v) for k, v in self.columns.items()} if self.columns else {}
        ex = {**rec, **{k: v for k, v in ex.items() if v is not None}}
        if self.extract is None:
            self.extract = "prompt" not in ex
        if self.extract:
            ex = extract_prompt(ex)
        if self.add_eos is None:
            self.add_eos = not is_conversational(ex)
        if self.add_eos:
            eos = self.tok.eos_token or ""
            for k in ("chosen", "rejected"):
                if not isinstance(ex.get(k), str):
                    raise ValueError(f"{k} is {type(ex.get(k)).__name__}, expected text")
                if not ex[k].endswith(eos):
                    ex[k] = ex[k] + eos
            if not isinstance(ex.get("prompt"), str):
                raise ValueError(f"prompt is {type(ex.get('prompt')).__name__}, expected text")
        return ex

    def _chat(self, messages: list[dict[str, Any]], ex: dict[str, Any], **kw: Any) -> list[int]:
        tools = ex.get("tools")
        tools = json.loads(tools) if isinstance(tools, str) else tools
        out = self.tok.apply_chat_template(messages, tokenize=True, return_dict=True, tools=tools,
                                           **(ex.get("chat_template_kwargs") or {}), **kw)
        return list(out["input_ids"])

    def lengths(self, records: list[dict[str, Any]]) -> list[tuple[int, int, int] | str]:
        """Per record (prompt, chosen, rejected) token counts, or an error message."""
        prepared: list[dict[str, Any] | str] = []
        for rec in records:
            try:
                prepared.append(self._prepare(rec))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                prepared.append(f"TRL's preprocessing fails on this row: {type(exc).__name__}: {exc}")
        texts: list[str] = []
        for ex in prepared:
            if isinstance(ex, dict) and not self.extract_is_chat(ex):
                texts.extend([ex["prompt"], ex["prompt"] + ex["chosen"], ex["prompt"] + ex["rejected"]])
        ids = iter(self.tok(text=texts)["input_ids"]) if texts else iter(())
        out: list[tuple[int, int, int] | str] = []
        for ex in prepared:
            if isinstance(ex, str):
                out.append(ex)
                continue
            try:
                if self.extract_is_chat(ex):
                    p = self._chat(ex["prompt"], ex, add_generation_prompt=True)
                    pc = self._chat(ex["prompt"] + ex["chosen"], ex)
                    pr = self._chat(ex["prompt"] + ex["rejected"], ex)
                else:
                    p, pc, pr = next(ids), next(ids), next(ids)
            except Exception as exc:  # noqa: BLE001 - chat templates raise anything
                out.append(f"tokenization failed: {type(exc).__name__}: {exc}")
                continue
            n = min(common_prefix_length(p, pc), common_prefix_length(p, pr))
            out.append((n, len(pc) - n, len(pr) - n))
        return out

    @staticmethod
    def extract_is_chat(ex: dict[str, Any]) -> bool:
        return is_conversational(ex)


def _tokenizer(settings: TraceSettings, tokenizer_obj: Any) -> Any:
    if tokenizer_obj is not None:
        return tokenizer_obj
    from pairaudit.config import default_cache_dir
    from pairaudit.tokenize import load_tokenizer

    tok, _ = load_tokenizer(settings.tokenizer, default_cache_dir())
    return tok


def token_lengths(source: str | Path, settings: TraceSettings, *, tokenizer_obj: Any = None,
                  batch_size: int = 1000) -> TokenLengths:
    """TRL 1.x token counts and keep/drop of every source record (see the module docstring)."""
    from pairaudit.io.readers import open_source

    src = open_source(source)
    tok = TrlTokenizer(_tokenizer(settings, tokenizer_obj), settings.columns)
    rows: list[int] = []
    lens: list[tuple[int, int, int]] = []
    errors: dict[int, str] = {}
    for batch in src.batches(batch_size):
        good = [r for r in batch if r.data is not None]
        for r in batch:
            if r.data is None:
                errors[r.row] = f"malformed record ({r.error}): datasets cannot load this file as it is"
                rows.append(r.row)
                lens.append((-1, -1, -1))
        for r, res in zip(good, tok.lengths([r.data for r in good])):
            rows.append(r.row)
            if isinstance(res, str):
                errors[r.row] = res
                lens.append((-1, -1, -1))
            else:
                lens.append(res)
    order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
    arr = np.asarray(lens, dtype=np.int64).reshape(-1, 3)[order]
    rows_arr = np.asarray(rows, dtype=np.int64)[order]
    ml = settings.max_length
    kept = arr[:, 0] >= 0
    if ml is not None and settings.truncation_mode == "keep_start":
        kept &= arr[:, 0] < ml  # TRL: len(example["prompt_ids"]) < args.max_length
    return TokenLengths(rows_arr, arr[:, 0], arr[:, 1], arr[:, 2], kept, errors, ml, settings.truncation_mode)


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
