"""Real TRL ``DPOTrainer`` runs for the trace matrix (tests/test_trace_matrix.py): a word-level tokenizer and a
tiny Llama built from a config (fast on CPU), 200 real UltraFeedback rows, a scan of them with the training
tokenizer (``audit.clean``), and the run trained on the source, on ``audit.clean`` or on the clean file.

Scenarios (each a real run): ``poisoned`` (one row holds a word whose input embedding is infinite), ``lr`` (a
learning-rate blow-up: ``learning_rate=1e3``), ``beta`` (a large DPO beta, clipping off, plain SGD at a usual
rate), ``clean`` (nothing wrong).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TRAP = "zork"  # the planted word (in the tokenizer's vocabulary, in no UltraFeedback row)
VOCAB = 600
ML = 192  # DPOConfig.max_length: TRL drops rows whose prompt reaches it, and truncates the rest
SCENARIOS: dict[str, dict[str, Any]] = {
    "poisoned": {"learning_rate": 1e-4},
    "lr": {"learning_rate": 1e3},
    "beta": {"learning_rate": 5e-6, "beta": 5e4, "max_grad_norm": 0.0, "optim": "sgd"},
    "clean": {"learning_rate": 5e-6},
}
BASE = dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, max_steps=6, seed=11, logging_steps=1,
            save_steps=2, report_to=[], use_cpu=True, disable_tqdm=True, max_length=ML, warmup_steps=0)


def build_tokenizer(folder: Path, records: list[dict[str, Any]]) -> Any:
    """A word-level tokenizer over the ``VOCAB`` most frequent words of ``records`` plus :data:`TRAP` (pad ==
    eos, like SmolLM2; other words share one id, which the tokenizer does not declare as unknown: a small
    vocabulary keeps the output layer cheap on CPU)."""
    from collections import Counter

    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    counts = Counter(w for r in records for k in ("prompt", "chosen", "rejected") for w in str(r.get(k, "")).split())
    words = [w for w, _ in counts.most_common(VOCAB) if w != TRAP]
    vocab = {t: i for i, t in enumerate(["<other>", "<eos>", TRAP] + words)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<other>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", pad_token="<eos>")
    tok.save_pretrained(str(folder))
    return tok


def save_init(folder: Path, records: list[dict[str, Any]], *, poison: bool) -> Path:
    """The starting model (reference and policy) and its tokenizer; with ``poison`` the input embedding of
    :data:`TRAP` is infinite, so a row holding that word gives a non-finite loss."""
    import torch
    import transformers

    tok = build_tokenizer(folder, records)
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                                   eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None,
                                   tie_word_embeddings=False)
    model = transformers.LlamaForCausalLM(cfg)
    if poison:
        with torch.no_grad():
            model.get_input_embeddings().weight[tok.convert_tokens_to_ids(TRAP)] = float("inf")
    model.save_pretrained(str(folder))
    return folder


def train(out: Path, train_dataset: Any, init: Path, *, record: bool = True, **args: Any) -> Any:
    """``DPOTrainer`` from ``init`` on ``train_dataset`` (with the recording callback, ``on_nonfinite="continue"``:
    it only records, so the same run serves the cells with and without the callback)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    from pairaudit.trace.recorder import add_pairaudit_callback

    tok = AutoTokenizer.from_pretrained(str(init))
    cfg = DPOConfig(str(out), **{**BASE, **args})
    trainer = DPOTrainer(model=AutoModelForCausalLM.from_pretrained(str(init)),
                         ref_model=AutoModelForCausalLM.from_pretrained(str(init)), args=cfg,
                         train_dataset=train_dataset, processing_class=tok)
    if record:
        add_pairaudit_callback(trainer, on_nonfinite="continue")
    trainer.train()
    return trainer
