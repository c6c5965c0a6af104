"""Reward-model margins ``r(prompt, chosen) - r(prompt, rejected)``.

``ScanConfig.reward_model`` names an ``AutoModelForSequenceClassification`` checkpoint (HF folder or
hub id) with one output (the reward; with two outputs the last is used). Each side is rendered with
the reward model's own chat template when it has one (conversational pairs keep their messages;
text pairs become ``[user: prompt, assistant: completion]``), else ``prompt + completion``. Inputs
longer than the model's limit keep their end (the response). Rewards are cached on disk by content
hash under ``cache_dir/reward/<model>-<precision>/`` like the reference log-probs.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.datatypes import Pair
from pairaudit.errors import ModelError, require
from pairaudit.models.device import pick_device, pick_precision, torch_dtype
from pairaudit.models.loading import hub_error, resolve_model
from pairaudit.models.logp_cache import LogpCache
from pairaudit.models.logp_kernel import make_batches


class RewardScorer:
    def __init__(self, model_arg: str, *, cache_dir: Path | None = None, device: str = "auto",
                 precision: str = "auto", trust_remote_code: bool = False, max_length: int = 2048,
                 batch_tokens: int | None = None, log: Callable[[str], None] | None = None) -> None:
        self.spec = resolve_model(model_arg)
        if self.spec.gguf_file:
            raise ModelError(f"reward model {model_arg} is a GGUF file",
                             expected="a sequence-classification checkpoint (HF folder or hub id)",
                             fix="pass the folder of an AutoModelForSequenceClassification model")
        self.log = log or (lambda msg: None)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.trust_remote_code = trust_remote_code
        self.device = pick_device(device)
        self.precision = pick_precision(precision, self.device)
        self.max_length = max_length
        self.batch_tokens = batch_tokens or (32768 if self.device.startswith("cuda") else 4096)
        self._model: Any = None
        self._tok: Any = None
        ident = self.spec.sha256 or hashlib.sha256(self.spec.display.encode()).hexdigest()
        self.cache = LogpCache(self.cache_dir / "reward" / f"{ident[:32]}-{self.precision}"
                               if self.cache_dir else None)
        self.n_cached = 0
        self.n_computed = 0
        self.seconds = 0.0

    @property
    def tokenizer(self) -> Any:
        if self._tok is None:
            from transformers import AutoTokenizer

            try:
                self._tok = AutoTokenizer.from_pretrained(self.spec.path, trust_remote_code=self.trust_remote_code)
            except Exception as exc:
                raise hub_error(self.spec, "reward-model", exc) from exc
            self._tok.truncation_side = "left"
        return self._tok

    @property
    def model(self) -> Any:
        if self._model is None:
            require("torch", "models", "reward-model scoring")
            from transformers import AutoModelForSequenceClassification

            try:
                model = AutoModelForSequenceClassification.from_pretrained(
                    self.spec.path, dtype=torch_dtype(self.precision), trust_remote_code=self.trust_remote_code)
            except Exception as exc:
                raise hub_error(self.spec, "reward-model", exc) from exc
            if model.config.pad_token_id is None:
                model.config.pad_token_id = self.tokenizer.pad_token_id or self.tokenizer.eos_token_id
            self._model = model.eval().to(self.device)
        return self._model

    def to_json(self) -> dict[str, Any]:
        return {**self.spec.to_json(), "device": self.device, "precision": self.precision}

    def render(self, pair: Pair) -> tuple[str, str]:
        """Text of (prompt + chosen) and (prompt + rejected) as the reward model reads them."""
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            pm = pair.prompt_messages if pair.prompt_messages is not None else (
                [{"role": "user", "content": pair.prompt}] if pair.prompt else [])
            outs = []
            for msgs, text in ((pair.chosen_messages, pair.chosen), (pair.rejected_messages, pair.rejected)):
                conv = pm + (msgs if msgs is not None else [{"role": "assistant", "content": text or ""}])
                outs.append(tok.apply_chat_template(conv, tokenize=False))
            return outs[0], outs[1]
        return (pair.prompt or "") + (pair.chosen or ""), (pair.prompt or "") + (pair.rejected or "")

    def _rewards(self, texts: list[str]) -> np.ndarray:
        import torch

        tok = self.tokenizer
        enc = tok(texts, add_special_tokens=not getattr(tok, "chat_template", None), truncation=True,
                  max_length=self.max_length)["input_ids"]
        keys = [hashlib.blake2b(np.asarray(e, np.int64).tobytes(), digest_size=16).digest() for e in enc]
        hit, vals, _ = self.cache.get(keys)
        self.n_cached += int(hit.sum())
        todo = [i for i in range(len(texts)) if not hit[i]]
        if todo:
            model = self.model
            t0 = time.perf_counter()
            pad = model.config.pad_token_id or 0
            out = np.zeros((len(todo), 3))
            for batch in make_batches([len(enc[i]) for i in todo], self.batch_tokens, 64):
                T = max(len(enc[todo[b]]) for b in batch)
                ids = torch.full((len(batch), T), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), T), dtype=torch.long)
                for j, b in enumerate(batch):  # right padding; HF classifiers pick the last non-pad token
                    seq = enc[todo[b]]
                    ids[j, : len(seq)] = torch.tensor(seq)
                    mask[j, : len(seq)] = 1
                with torch.inference_mode():
                    logits = model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
                r = logits[:, -1].float().cpu().numpy()
                for j, b in enumerate(batch):
                    out[b, 0] = r[j]
            self.seconds += time.perf_counter() - t0
            self.n_computed += len(todo)
            self.cache.put([keys[i] for i in todo], out)
            vals[todo] = out
        return vals[:, 0]

    def margins(self, pairs: list[Pair]) -> np.ndarray:
        """``r(chosen) - r(rejected)`` per pair (NaN for pre-tokenized pairs, which have no text)."""
        out = np.full(len(pairs), np.nan)
        idx = [i for i, p in enumerate(pairs) if not p.pretokenized]
        texts: list[str] = []
        for i in idx:
            texts.extend(self.render(pairs[i]))
        if texts:
            r = self._rewards(texts)
            out[idx] = r[0::2] - r[1::2]
        return out
