"""``boundary_merge`` names exactly the rows for which TRL warns "The tokenized prompt is not a prefix of
the tokenized prompt+completion".

TRL's own preprocessing (``DPOTrainer._prepare_dataset``: extract_prompt, EOS, its ``tokenize_fn``) runs on
real UltraFeedback (explicit prompt) and HH-RLHF (implicit prompt) rows, text and conversational; nothing is
trained. TRL warns for a row when its tokenized prompt (TRL's ``_tokenize`` of the prepared prompt) is
longer than the ``prompt_ids`` it keeps (``prompt_len < len(prompt_ids)`` in ``tokenize_fn``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import write_jsonl
from test_trl_differential import HH, UF, _hh_messages, _read, smol  # noqa: F401 - the fixture

trl = pytest.importorskip("trl")
from trl.trainer import dpo_trainer  # noqa: E402

import pairaudit  # noqa: E402

N = 1000  # UltraFeedback's 1,000 clean rows; the first 1,000 HH rows


def _data() -> dict[str, list[dict[str, Any]]]:
    uf = [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in _read(UF, N)]
    hh = [{"chosen": r["chosen"], "rejected": r["rejected"]} for r in _read(HH, N)]
    hh_conv = [{"chosen": _hh_messages(r["chosen"]), "rejected": _hh_messages(r["rejected"])} for r in hh]
    hh_conv = [r for r in hh_conv if r["chosen"] and r["rejected"] and r["chosen"][0] == r["rejected"][0]]
    return {"ultrafeedback": uf, "hh_implicit": hh, "hh_implicit_conversational": hh_conv[:300],
            "ultrafeedback_conversational": [{"prompt": [{"role": "user", "content": r["prompt"]}],
                                              "chosen": [{"role": "assistant", "content": r["chosen"]}],
                                              "rejected": [{"role": "assistant", "content": r["rejected"]}]}
                                             for r in uf[:300]]}


DATA = _data()


def trl_warned_rows(rows: list[dict[str, Any]], tok: Any, tmp_path: Path) -> list[int]:
    """The rows for which TRL's own tokenization warns."""
    from datasets import Dataset

    ds = Dataset.from_list([{**r, "row": i} for i, r in enumerate(rows)])
    args = trl.DPOConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True, bf16=False, max_length=None)
    prepared = dpo_trainer.DPOTrainer._prepare_dataset(SimpleNamespace(_tokenizer=tok), ds, tok, args, "train")
    warned = []
    for ex in prepared:
        kw = {"add_generation_prompt": True} if isinstance(ex["prompt"], list) else {}
        prompt_ids = dpo_trainer._tokenize(tok, ex["prompt"], **kw)["input_ids"]
        assert prompt_ids[:len(ex["prompt_ids"])] == ex["prompt_ids"]
        if len(ex["prompt_ids"]) < len(prompt_ids):
            warned.append(ex["row"])
    return warned


@pytest.mark.parametrize("name", list(DATA))
def test_boundary_merge_is_every_row_trl_warns_on(name: str, smol: dict[str, Any],  # noqa: F811
                                                  tmp_path: Path) -> None:
    rows = DATA[name]
    warned = trl_warned_rows(rows, smol["tok"], tmp_path / "trl")
    if name in ("ultrafeedback", "hh_implicit"):
        assert warned, f"TRL warns on some {name} rows (merged boundary tokens)"
    audit = pairaudit.scan(write_jsonl(tmp_path / "d.jsonl", rows), out=tmp_path / "out", only=["boundary_merge"],
                           max_length=None, log=lambda m: None)
    f = audit.findings.filter(audit.findings["check"] == "boundary_merge")
    assert sorted(f["row"].to_list()) == warned
    for d in f["detail"].to_list():
        assert " not in the training sequence" in d
        assert ("last 1 token (" in d) == ("is not in the training sequence" in d), d  # "1 token ... is", "2 tokens ... are"


def test_a_mid_word_implicit_cut_is_named_once_by_split_word(smol: dict[str, Any],  # noqa: F811
                                                             tmp_path: Path) -> None:
    """With split_word running (the default), an implicit prompt cut inside a word is split_word's finding,
    not boundary_merge's too (issue 34: the second finding on the same row was labelled not worth reading);
    every row TRL warns on is still named, once, and split_word's detail carries TRL's warning."""
    rows = DATA["hh_implicit"]
    warned = trl_warned_rows(rows, smol["tok"], tmp_path / "trl")
    audit = pairaudit.scan(write_jsonl(tmp_path / "d.jsonl", rows), out=tmp_path / "out",
                           only=["boundary_merge", "split_word"], max_length=None, log=lambda m: None)
    f = audit.findings
    merged = f.filter(f["check"] == "boundary_merge")["row"].to_list()
    split = f.filter(f["check"] == "split_word")
    named = split.filter(split["detail"].str.contains("TRL warns"))["row"].to_list()
    assert split.height and not set(merged) & set(named)
    assert sorted(merged + named) == warned


def test_the_completions_start_is_shown_in_whole_characters(tmp_path: Path) -> None:
    """A character the byte-level tokenizer splits over several tokens (Hangul here) is shown whole in the
    detail's preview of what the completions start with, not cut into U+FFFD."""
    rows = [{"prompt": "Greet me, and end with hel", "chosen": "lo 안녕하세요 friend.", "rejected": "lo 안녕 there."}]
    audit = pairaudit.scan(write_jsonl(tmp_path / "d.jsonl", rows), out=tmp_path / "out", only=["boundary_merge"],
                           log=lambda m: None)
    [detail] = audit.findings["detail"].to_list()
    assert "the trainer's completions start ' hello 안' / ' hello 안'" in detail and "\ufffd" not in detail
