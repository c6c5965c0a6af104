"""Real training runs for the trace tests: tiny random Llama models (built from a config) on real data slices,
trained by ``transformers.Trainer`` or TRL's ``DPOTrainer`` with the recording callback.

Also a script: ``torchrun --nproc_per_node 2 tests/support/trace_helpers.py sft OUT DATA`` (gloo on CPU).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TRAP = 7  # global step at which a Crash callback raises (simulated crash)


def tokenizer() -> Any:
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def tiny_llama(tok: Any, *, tie: bool = True, seed: int = 0) -> Any:
    """A ~0.4M-parameter Llama (hidden 8, one layer) over the SmolLM2 vocabulary."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                      tie_word_embeddings=tie, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                      bos_token_id=tok.bos_token_id)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg)


def crash_callback(at_step: int) -> Any:
    from transformers import TrainerCallback

    class Crash(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == at_step:
                raise RuntimeError(f"simulated crash at step {at_step}")

    return Crash()


def sft_args(out: Path, **kw: Any) -> Any:
    from transformers import TrainingArguments

    base = dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, num_train_epochs=2, seed=1234,
                logging_steps=1, save_steps=10, report_to=[], use_cpu=True, disable_tqdm=True,
                save_only_model=False, learning_rate=1e-3)
    base.update(kw)
    return TrainingArguments(str(out), **base)


def train_sft(out: Path, data: Path, *, resume: str | None = None, crash_at: int | None = None,
              trap_token: int | None = None, callback_kwargs: dict[str, Any] | None = None, **args_kw: Any) -> Any:
    """``transformers.Trainer`` on the chosen text of each pair (causal LM), with the recording callback.

    ``trap_token``: that token's input embedding is set to inf (untied head), so any row containing it makes
    the loss and the gradients non-finite."""
    import datasets
    import torch
    from transformers import DataCollatorForLanguageModeling, Trainer

    from pairaudit.trace.recorder import PairauditCallback
    from pairaudit.trace.rows import record_rows

    tok = tokenizer()
    ds = datasets.load_dataset("json", data_files=str(data), split="train")
    ds = ds.map(lambda ex: tok(ex["chosen"], truncation=True, max_length=24), remove_columns=ds.column_names)
    callbacks = [PairauditCallback(record_rows(data), data=str(data), **(callback_kwargs or {}))]
    if crash_at is not None:
        callbacks.append(crash_callback(crash_at))
    model = tiny_llama(tok, tie=trap_token is None)
    if trap_token is not None:
        with torch.no_grad():
            model.get_input_embeddings().weight[trap_token] = float("inf")
    trainer = Trainer(model=model, args=sft_args(out, **args_kw), train_dataset=ds,
                      data_collator=DataCollatorForLanguageModeling(tok, mlm=False), callbacks=callbacks)
    return train_until_crash(trainer, resume)


def train_until_crash(trainer: Any, resume: str | None = None) -> Any:
    """``trainer.train()``; the crash planted by ``crash_callback`` ends it like a dead run, anything else raises."""
    try:
        trainer.train(resume_from_checkpoint=resume)
    except RuntimeError as exc:
        if "simulated crash" not in str(exc):
            raise
    return trainer


def read_records(path: Path, n: int, drop_metadata: bool = True) -> list[dict[str, Any]]:
    """The first ``n`` JSONL records of ``path`` (``metadata`` removed: it leaks planted faults)."""
    import itertools
    import json

    out = []
    for line in itertools.islice(open(path, encoding="utf-8"), n):
        rec = json.loads(line)
        if drop_metadata:
            rec.pop("metadata", None)
        out.append(rec)
    return out


def trace_settings(**values: Any) -> Any:
    from pairaudit.trace import settings

    s = settings.TraceSettings()
    s.update(values, "test")
    return s


def save_init(out: Path, *, tie: bool = True, trap_token: int | None = None) -> Path:
    """Save a tiny model (and the tokenizer) as the run's starting point; optionally corrupt one embedding row."""
    import torch

    tok = tokenizer()
    model = tiny_llama(tok, tie=tie)
    if trap_token is not None:
        with torch.no_grad():
            model.get_input_embeddings().weight[trap_token] = float("inf")
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


def train_dpo(out: Path, data: Path, init: Path, *, max_length: int, resume: str | None = None,
              crash_at: int | None = None, record: bool = True, callback_kwargs: dict[str, Any] | None = None,
              **args_kw: Any) -> Any:
    """TRL ``DPOTrainer`` from the model saved in ``init`` (policy and reference), with the recording callback."""
    import datasets
    from transformers import AutoModelForCausalLM
    from trl import DPOConfig, DPOTrainer

    from pairaudit.trace.recorder import add_pairaudit_callback

    tok = tokenizer()
    ds = datasets.load_dataset("json", data_files=str(data), split="train")
    if "metadata" in ds.column_names:
        ds = ds.remove_columns(["metadata"])
    ds = ds.map(lambda _, i: {"row": i}, with_indices=True)  # the source row, carried through TRL's filter
    base = dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, num_train_epochs=2, seed=4321,
                logging_steps=1, save_steps=10, report_to=[], use_cpu=True, disable_tqdm=True, max_length=max_length,
                learning_rate=1e-3)
    base.update(args_kw)
    model = AutoModelForCausalLM.from_pretrained(str(init))
    ref = AutoModelForCausalLM.from_pretrained(str(init))
    trainer = DPOTrainer(model=model, ref_model=ref, args=DPOConfig(str(out), **base), train_dataset=ds,
                         processing_class=tok, callbacks=[crash_callback(crash_at)] if crash_at else None)
    if record:
        add_pairaudit_callback(trainer, data=str(data), **(callback_kwargs or {}))
    return train_until_crash(trainer, resume)


if __name__ == "__main__":  # torchrun entry point
    import torch

    torch.set_num_threads(1)
    kind, out, data = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if kind != "sft":
        raise SystemExit(f"unknown run kind {kind}")
    train_sft(out, data, per_device_train_batch_size=3, ddp_backend="gloo")
    import torch.distributed as dist

    if dist.is_initialized():  # a gloo group left alive at exit can abort rank 0 ("terminate called ...")
        dist.barrier()
        dist.destroy_process_group()


def unused_word_token(tok: Any, recs: list[dict[str, Any]]) -> tuple[int, str]:
    """A whole-word token that occurs in no row of the slice (and round-trips through the tokenizer)."""
    used: set[int] = set()
    for r in recs:
        for k in ("prompt", "chosen", "rejected"):
            if k in r:
                used.update(tok(r[k])["input_ids"])
    for t in range(30000, 45000):
        word = tok.decode([t])
        if t not in used and word.startswith(" ") and word.strip().isalpha() and tok(word)["input_ids"] == [t]:
            return t, word
    raise AssertionError("no unused token found")
