"""Tokenize pairs exactly as TRL's DPOTrainer sees them.

Conversational pairs go through the tokenizer's chat template the way TRL's
``maybe_apply_chat_template`` does it: the prompt is rendered with ``add_generation_prompt=True``
and each completion is the rendering of ``prompt + completion`` with the prompt text cut off.
Completions get the EOS token appended; the prompt is truncated from the left to
``max_prompt_length``, completions to ``max_completion_length``, then prompt+completion to
``max_length`` by ``truncation_mode`` (``keep_end`` / ``keep_start``), as in TRL's DPOConfig.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError, ModelError
from pairaudit.models.loading import ModelSpec, hub_error, resolve_model
from pairaudit.types import Messages, Pair


@dataclass(slots=True)
class EncodedPair:
    """Token ids of one pair before truncation, plus what survives truncation.

    ``chosen_ids``/``rejected_ids`` are completion tokens including the appended EOS.
    ``*_kept_prompt``/``*_kept_completion`` are the numbers of prompt/completion tokens the trainer
    keeps after all truncation (the loss only sees kept completion tokens).
    """

    prompt_ids: list[int]
    chosen_ids: list[int]
    rejected_ids: list[int]
    chosen_kept: tuple[int, int]  # (prompt tokens kept, completion tokens kept)
    rejected_kept: tuple[int, int]


def truncate(prompt_len: int, completion_len: int, *, max_length: int | None, max_prompt_length: int | None,
             max_completion_length: int | None, truncation_mode: str) -> tuple[int, int]:
    """How many prompt and completion tokens survive TRL's truncation (prompt kept from the end,
    completion from the start; ``max_length`` cuts the concatenation from the left for keep_end or
    the right for keep_start)."""
    p = prompt_len if max_prompt_length is None else min(prompt_len, max_prompt_length)
    c = completion_len if max_completion_length is None else min(completion_len, max_completion_length)
    if max_length is not None and p + c > max_length:
        if truncation_mode == "keep_start":
            p = min(p, max_length)
            c = max_length - p
        else:  # keep_end: drop from the left, prompt first
            over = p + c - max_length
            cut_p = min(over, p)
            p -= cut_p
            c -= over - cut_p
    return p, c


def kept_sequence(prompt_ids: list[int], completion_ids: list[int], kept: tuple[int, int],
                  truncation_mode: str = "keep_end") -> tuple[list[int], list[int]]:
    """The (prompt, completion) token lists the trainer keeps, given ``kept`` from ``truncate``.

    The prompt always keeps its end. The completion keeps its start, except under keep_end when
    ``max_length`` cut through the whole prompt into the completion: then it keeps its end.
    """
    p, c = kept
    prompt = prompt_ids[len(prompt_ids) - p:] if p else []
    if c == 0:
        return prompt, []
    if truncation_mode == "keep_end" and p == 0 and c < len(completion_ids):
        # keep_end drops from the left; completion_ids may also have been capped by
        # max_completion_length first, which the caller expresses by passing the capped list.
        return prompt, completion_ids[len(completion_ids) - c:]
    return prompt, completion_ids[:c]


class DPOTokenizer:
    """The user's training tokenizer, with the DPO settings that decide truncation."""

    def __init__(self, tokenizer: Any, spec: ModelSpec | None, *, max_length: int | None = 1024,
                 max_prompt_length: int | None = 512, max_completion_length: int | None = None,
                 truncation_mode: str = "keep_end") -> None:
        if truncation_mode not in ("keep_end", "keep_start"):
            raise ConfigError(f"--truncation-mode {truncation_mode!r} is not known",
                              expected="keep_end or keep_start (TRL DPOConfig.truncation_mode)")
        self.tok = tokenizer
        self.spec = spec
        self.max_length = max_length
        self.max_prompt_length = max_prompt_length
        self.max_completion_length = max_completion_length
        self.truncation_mode = truncation_mode
        self.eos_id: int | None = tokenizer.eos_token_id
        self.pad_id: int | None = tokenizer.pad_token_id
        self.vocab_size: int = len(tokenizer)
        self.special_ids: frozenset[int] = frozenset(int(i) for i in tokenizer.all_special_ids)
        self.unk_id: int | None = tokenizer.unk_token_id
        specials = sorted({str(t) for t in tokenizer.all_special_tokens if str(t)}, key=len, reverse=True)
        self._special_re = re.compile("|".join(re.escape(s) for s in specials)) if specials else None
        backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
        self._backend = backend
        self._fast = getattr(backend, "encode_batch_fast", None) if backend is not None else None
        self.has_chat_template = bool(getattr(tokenizer, "chat_template", None))

    # -- text ---------------------------------------------------------------------------------
    def strip_special(self, text: str) -> str:
        """Text with every special-token string (e.g. ``<|im_end|>``) removed."""
        return self._special_re.sub("", text) if self._special_re else text

    def render(self, pair: Pair) -> tuple[str, str, str]:
        """(prompt, chosen, rejected) as the trainer tokenizes them (chat template applied)."""
        if not pair.conversational:
            return pair.prompt or "", pair.chosen or "", pair.rejected or ""
        if not self.has_chat_template:
            raise ModelError(
                f"row {pair.row} is conversational but the tokenizer {self.display} has no chat template",
                fix="pass --tokenizer with the chat template your trainer uses")
        prompt_msgs: Messages = pair.prompt_messages or []
        apply = self.tok.apply_chat_template
        if prompt_msgs and prompt_msgs[-1].get("role") == "assistant":
            prompt = apply(prompt_msgs, tokenize=False, continue_final_message=True)
        elif prompt_msgs:
            prompt = apply(prompt_msgs, tokenize=False, add_generation_prompt=True)
        else:
            prompt = ""
        out = [prompt]
        for msgs in (pair.chosen_messages or [], pair.rejected_messages or []):
            full = apply(prompt_msgs + msgs, tokenize=False)
            out.append(full[len(prompt):] if full.startswith(prompt) else full)
        return out[0], out[1], out[2]

    @property
    def display(self) -> str:
        return self.spec.display if self.spec else type(self.tok).__name__

    # -- ids ----------------------------------------------------------------------------------
    def encode_texts(self, texts: list[str]) -> list[list[int]]:
        if self._fast is not None:
            return [e.ids for e in self._fast(texts, add_special_tokens=False)]
        if self._backend is not None:
            return [e.ids for e in self._backend.encode_batch(texts, add_special_tokens=False)]
        return self.tok(texts, add_special_tokens=False)["input_ids"]

    def kept(self, prompt_len: int, completion_len: int) -> tuple[int, int]:
        return truncate(prompt_len, completion_len, max_length=self.max_length,
                        max_prompt_length=self.max_prompt_length,
                        max_completion_length=self.max_completion_length, truncation_mode=self.truncation_mode)

    def encode_rendered(self, rendered: list[tuple[str, str, str]]) -> list[EncodedPair]:
        n = len(rendered)
        flat = [t for triple in rendered for t in triple]
        ids = self.encode_texts(flat)
        eos = [self.eos_id] if self.eos_id is not None else []
        out = []
        for i in range(n):
            p, c, r = ids[3 * i], ids[3 * i + 1] + eos, ids[3 * i + 2] + eos
            out.append(EncodedPair(p, c, r, self.kept(len(p), len(c)), self.kept(len(p), len(r))))
        return out

    def encode_pairs(self, pairs: list[Pair]) -> list[EncodedPair]:
        """Encode text pairs (pre-tokenized pairs must be handled by the caller)."""
        return self.encode_rendered([self.render(p) for p in pairs])


_TOKENIZER_CACHE: dict[tuple[str, str | None], Any] = {}


def load_tokenizer(spec_arg: str | None, cache_dir: Path | None = None, *, trust_remote_code: bool = False
                   ) -> tuple[Any, ModelSpec]:
    """Load the training tokenizer: a HF folder or id, a GGUF file, or the bundled SmolLM2 GGUF.

    Parsing a GGUF file takes seconds, so its tokenizer is saved once under ``cache_dir`` (keyed
    by the file's sha256) and reloaded from there.
    """
    spec = resolve_model(spec_arg)
    key = (spec.path, spec.gguf_file)
    if key in _TOKENIZER_CACHE:
        return _TOKENIZER_CACHE[key], spec
    from transformers import AutoTokenizer

    try:
        if spec.gguf_file and cache_dir is not None and spec.sha256:
            saved = Path(cache_dir) / "tokenizers" / spec.sha256[:32]
            if (saved / "tokenizer_config.json").exists():
                tok = AutoTokenizer.from_pretrained(str(saved))
            else:
                tok = AutoTokenizer.from_pretrained(spec.path, gguf_file=spec.gguf_file)
                tmp = saved.with_name(saved.name + f".tmp{id(tok)}")
                tok.save_pretrained(str(tmp))
                try:
                    tmp.rename(saved)
                except OSError:  # another process won the race
                    import shutil

                    shutil.rmtree(tmp, ignore_errors=True)
        else:
            tok = AutoTokenizer.from_pretrained(spec.path, trust_remote_code=trust_remote_code,
                                                **spec.from_pretrained_kwargs())
    except Exception as exc:  # noqa: BLE001 - transformers raises many types
        raise hub_error(spec, "tokenizer", exc) from exc
    _TOKENIZER_CACHE[key] = tok
    return tok, spec
