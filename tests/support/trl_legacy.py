"""TRL 0.28.0's DPO preprocessing, transcribed, to pin pairaudit's ``trl-0.27.2`` (legacy) profile.

TRL 0.28 cannot be installed beside TRL 1.x, so ``tests/test_trl_differential.py`` compares pairaudit with
this transcription of ``trl/data_utils.py`` (``extract_prompt``, ``maybe_extract_prompt``,
``apply_chat_template``) and ``DPOTrainer._prepare_dataset`` / ``tokenize_row`` / the truncation in
``concatenated_forward`` of TRL 0.28.0 (Copyright 2020-2026 The HuggingFace Team, Apache-2.0), the
statements kept as TRL wrote them. When ``PAIRAUDIT_TRL_LEGACY`` names a folder holding TRL 0.28's
unpacked wheel (``scripts/trl_legacy.sh`` makes one), :func:`prepare` runs TRL's own functions from it in
a subprocess instead, which checks this transcription too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import takewhile
from pathlib import Path
from typing import Any

LEGACY_ENV = "PAIRAUDIT_TRL_LEGACY"


def is_conversational(example: dict[str, Any]) -> bool:
    supported_keys = ["prompt", "chosen", "rejected", "completion", "messages"]
    example_keys = {key for key in example.keys() if key in supported_keys}
    if example_keys:
        key = example_keys.pop()
        maybe_messages = example[key]
        if isinstance(maybe_messages, list):
            maybe_message = maybe_messages[0]
            if isinstance(maybe_message, dict) and "role" in maybe_message:
                return True
    return False


def extract_prompt(example: dict[str, Any]) -> dict[str, Any]:
    for idx in range(min(len(example["chosen"]), len(example["rejected"]))):
        if example["chosen"][idx] != example["rejected"][idx]:
            if example["chosen"][idx - 1] == " ":  # remove space before the prompt
                idx -= 1
            break
    return {"prompt": example["chosen"][:idx], "chosen": example["chosen"][idx:],
            "rejected": example["rejected"][idx:]}


def maybe_extract_prompt(example: dict[str, Any]) -> dict[str, Any]:
    if "chosen" not in example or "rejected" not in example:
        return example
    if "prompt" in example:
        chosen_conv = is_conversational({"chosen": example["chosen"]})
        prompt_conv = is_conversational({"prompt": example["prompt"]})
        if (chosen_conv and prompt_conv) or (not chosen_conv and not prompt_conv):
            return example
    return extract_prompt({"chosen": example["chosen"], "rejected": example["rejected"]})


def apply_chat_template(example: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The preference (explicit prompt) branch of TRL 0.28's ``apply_chat_template``."""
    last_role = example["prompt"][-1]["role"]
    if last_role in ["user", "tool"]:
        add_generation_prompt, continue_final_message = True, False
    elif last_role == "assistant":
        add_generation_prompt, continue_final_message = False, True
    else:
        raise ValueError(f"Invalid role in the last message: {last_role}")
    prompt = tokenizer.apply_chat_template(example["prompt"], continue_final_message=continue_final_message,
                                           tokenize=False, add_generation_prompt=add_generation_prompt)
    prompt_chosen = tokenizer.apply_chat_template(example["prompt"] + example["chosen"], tokenize=False)
    prompt = "".join(x for x, _ in takewhile(lambda x: x[0] == x[1], zip(prompt, prompt_chosen, strict=False)))
    chosen = prompt_chosen[len(prompt):]
    prompt_rejected = tokenizer.apply_chat_template(example["prompt"] + example["rejected"], tokenize=False)
    prompt = "".join(x for x, _ in takewhile(lambda x: x[0] == x[1], zip(prompt, prompt_rejected, strict=False)))
    rejected = prompt_rejected[len(prompt):]
    return {"prompt": prompt, "chosen": chosen, "rejected": rejected}


def maybe_apply_chat_template(example: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    return apply_chat_template(example, tokenizer) if is_conversational(example) else example


def tokenize_row(features: dict[str, Any], processing_class: Any, max_prompt_length: int | None = None,
                 max_completion_length: int | None = None, add_special_tokens: bool = True,
                 is_chat: bool = False) -> dict[str, list[int]]:
    tokenizer = processing_class
    prompt_input_ids = tokenizer(features["prompt"], add_special_tokens=False)["input_ids"]
    chosen_input_ids = tokenizer(features["chosen"], add_special_tokens=False)["input_ids"]
    rejected_input_ids = tokenizer(features["rejected"], add_special_tokens=False)["input_ids"]
    if add_special_tokens:
        if tokenizer.bos_token_id is not None:
            prompt_input_ids = [tokenizer.bos_token_id] + prompt_input_ids
        if tokenizer.eos_token_id is not None:
            prompt_input_ids = prompt_input_ids + [tokenizer.eos_token_id]
    if not is_chat:
        chosen_input_ids = chosen_input_ids + [tokenizer.eos_token_id]
        rejected_input_ids = rejected_input_ids + [tokenizer.eos_token_id]
    if max_prompt_length is not None:
        prompt_input_ids = prompt_input_ids[-max_prompt_length:]
    if max_completion_length is not None:
        chosen_input_ids = chosen_input_ids[:max_completion_length]
        rejected_input_ids = rejected_input_ids[:max_completion_length]
    return {"prompt_input_ids": prompt_input_ids, "chosen_input_ids": chosen_input_ids,
            "rejected_input_ids": rejected_input_ids}


def truncate(prompt_ids: list[int], completion_ids: list[int], max_length: int | None,
             truncation_mode: str) -> tuple[list[int], list[int]]:
    """``concatenated_forward``: prompt + completion, loss mask on the completion, then (rows being
    contiguous after ``flush_left``/``flush_right``) the first (keep_start) or last (keep_end)
    ``max_length`` tokens of each row; returns the kept (prompt, completion) tokens."""
    input_ids = prompt_ids + completion_ids
    loss_mask = [0] * len(prompt_ids) + [1] * len(completion_ids)
    if max_length is not None and max_length < len(input_ids):
        if truncation_mode == "keep_start":
            input_ids, loss_mask = input_ids[:max_length], loss_mask[:max_length]
        elif truncation_mode == "keep_end":
            input_ids, loss_mask = input_ids[-max_length:], loss_mask[-max_length:]
        else:
            raise ValueError(f"Unknown truncation mode: '{truncation_mode}'")
    n_prompt = loss_mask.count(0)
    return input_ids[:n_prompt], input_ids[n_prompt:]


def _prepare_here(rows: list[dict[str, Any]], tokenizer: Any, max_prompt_length: int | None,
                  max_completion_length: int | None) -> list[dict[str, Any]]:
    """``DPOTrainer._prepare_dataset`` of TRL 0.28 on a real ``datasets.Dataset``."""
    from datasets import Dataset

    dataset = Dataset.from_list(rows)
    dataset = dataset.map(maybe_extract_prompt)
    is_chat = is_conversational(next(iter(dataset)))
    dataset = dataset.map(maybe_apply_chat_template, fn_kwargs={"tokenizer": tokenizer})
    dataset = dataset.map(tokenize_row, remove_columns=["chosen", "rejected"],
                          fn_kwargs={"processing_class": tokenizer, "max_prompt_length": max_prompt_length,
                                     "max_completion_length": max_completion_length, "add_special_tokens": False,
                                     "is_chat": is_chat})
    return [dict(r) for r in dataset]


_SUBPROCESS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import trl.import_utils as iu
iu.is_weave_available = lambda: False  # TRL 0.28 mistakes transformers 5's (False, None) for True
import trl
assert trl.__version__.startswith("0.28"), trl.__version__
from datasets import Dataset
from transformers import AutoTokenizer
from trl.data_utils import is_conversational, maybe_apply_chat_template, maybe_extract_prompt
from trl.trainer.dpo_trainer import DPOTrainer
job = json.load(sys.stdin)
tok = AutoTokenizer.from_pretrained(job["tokenizer"])
dataset = Dataset.from_list(job["rows"])
dataset = dataset.map(maybe_extract_prompt)
is_chat = is_conversational(next(iter(dataset)))
dataset = dataset.map(maybe_apply_chat_template, fn_kwargs={"tokenizer": tok, "tools": None})
dataset = dataset.map(DPOTrainer.tokenize_row, remove_columns=["chosen", "rejected"],
                      fn_kwargs={"processing_class": tok, "max_prompt_length": job["max_prompt_length"],
                                 "max_completion_length": job["max_completion_length"], "add_special_tokens": False,
                                 "is_chat": is_chat})
json.dump([dict(r) for r in dataset], sys.stdout)
"""


def prepare(rows: list[dict[str, Any]], tokenizer: Any, tokenizer_dir: Path, max_prompt_length: int | None,
            max_completion_length: int | None) -> tuple[list[dict[str, Any]], str]:
    """(prepared rows, which implementation ran): TRL 0.28's own code when ``PAIRAUDIT_TRL_LEGACY`` is set,
    else the transcription above."""
    legacy = os.environ.get(LEGACY_ENV)
    if not legacy:
        return _prepare_here(rows, tokenizer, max_prompt_length, max_completion_length), "transcription of TRL 0.28.0"
    job = {"rows": rows, "tokenizer": str(tokenizer_dir), "max_prompt_length": max_prompt_length,
           "max_completion_length": max_completion_length}
    res = subprocess.run([sys.executable, "-c", _SUBPROCESS, legacy], input=json.dumps(job), capture_output=True,
                         text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if res.returncode != 0:
        raise RuntimeError(f"TRL 0.28 from {legacy} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout), f"TRL 0.28.0's own code from {legacy}"
