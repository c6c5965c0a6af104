"""pairaudit's trainer profiles against TRL's own preprocessing, on real rows.

The installed TRL (the ``dev`` extra installs it) builds a real ``DPOTrainer`` (tiny random model, the
bundled SmolLM2 tokenizer) on real UltraFeedback and HH-RLHF rows, standard and conversational, explicit
and implicit prompt; its prepared dataset (which rows survive, prompt / chosen / rejected ids) and its
collator's truncated sequences must equal what pairaudit's profile computes, row for row. The legacy
profile (TRL < 0.29) is pinned against TRL 0.28's code (``tests/support/trl_legacy.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED, write_jsonl

trl = pytest.importorskip("trl", reason="the TRL differential test needs trl: pip install 'pairaudit[dev]'")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import pairaudit  # noqa: E402
from pairaudit.errors import ConfigError  # noqa: E402
from pairaudit.io.formats import detect_format, normalise  # noqa: E402
from pairaudit.models.tokenizer import load_tokenizer  # noqa: E402
from pairaudit.trainer import profiles  # noqa: E402
from pairaudit.trainer.tokenizer import DPOTokenizer  # noqa: E402

UF = SHARED / "ultrafeedback-1k" / "train_clean.jsonl"
HH = SHARED / "hh-rlhf" / "helpful-base-test.jsonl"
N = 120  # rows per dataset
MAX_LENGTH = 256  # short enough that TRL truncates and (keep_start) drops real rows


def _read(path: Path, n: int) -> list[dict[str, Any]]:
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests need ../shared/data beside the checkout")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line, _ in zip(fh, range(n))]


def _hh_messages(text: str) -> list[dict[str, str]]:
    parts = re.split(r"\n\n(Human|Assistant): ?", text)
    return [{"role": "user" if role == "Human" else "assistant", "content": content}
            for role, content in zip(parts[1::2], parts[2::2])]


def datasets_by_name() -> dict[str, list[dict[str, Any]]]:
    uf = [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in _read(UF, N)]
    hh = [{"chosen": r["chosen"], "rejected": r["rejected"]} for r in _read(HH, N)]
    hh_conv = [{"chosen": _hh_messages(r["chosen"]), "rejected": _hh_messages(r["rejected"])} for r in hh]
    # TRL's extract_prompt leaves an empty prompt (and TRL crashes) when the first messages differ; those
    # rows are pinned separately (test_rows_trl_cannot_tokenize)
    hh_conv = [r for r in hh_conv if r["chosen"] and r["rejected"] and r["chosen"][0] == r["rejected"][0]]
    return {
        "ultrafeedback": uf,
        "ultrafeedback_conversational": [{"prompt": [{"role": "user", "content": r["prompt"]}],
                                          "chosen": [{"role": "assistant", "content": r["chosen"]}],
                                          "rejected": [{"role": "assistant", "content": r["rejected"]}]} for r in uf],
        "hh_implicit": hh,
        "hh_implicit_conversational": hh_conv,
    }


DATA = datasets_by_name()


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tok, spec = load_tokenizer(None, tmp_path_factory.mktemp("cache"))
    folder = tmp_path_factory.mktemp("smol-tokenizer")
    tok.save_pretrained(str(folder))
    return {"tok": tok, "spec": spec, "dir": folder}


def _tiny_model(vocab: int) -> Any:
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=vocab, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                   num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(cfg)


def trl_prepare(rows: list[dict[str, Any]], tok: Any, out: Path, **config: Any) -> tuple[Any, Any]:
    """A real DPOTrainer's prepared train dataset (with a ``row`` column) and its collator."""
    from datasets import Dataset

    ds = Dataset.from_list([{**r, "row": i} for i, r in enumerate(rows)])
    args = trl.DPOConfig(output_dir=str(out), bf16=False, report_to="none", use_cpu=True, **config)
    trainer = trl.DPOTrainer(model=_tiny_model(len(tok)), ref_model=_tiny_model(len(tok)), args=args,
                             train_dataset=ds, processing_class=tok)
    return trainer.train_dataset, trainer.data_collator


def pairaudit_encode(rows: list[dict[str, Any]], tok: Any, spec: Any, st: profiles.TrainerSettings) -> tuple:
    fmt = detect_format(rows[0])
    pairs = [normalise(i, r, fmt) for i, r in enumerate(rows)]
    dtok = DPOTokenizer(tok, spec, trainer=st)
    return dtok, dtok.encode_pairs(pairs)


def _unpadded(batch: dict[str, Any], k: int) -> tuple[list[int], list[int]]:
    """(prompt, completion) of sequence ``k`` of a collated batch."""
    keep = batch["attention_mask"][k].bool()
    ids = batch["input_ids"][k][keep].tolist()
    comp = batch["completion_mask"][k][keep].tolist()
    n_prompt = comp.count(0)
    assert comp == [0] * n_prompt + [1] * (len(comp) - n_prompt)
    return ids[:n_prompt], ids[n_prompt:]


def assert_same_as_trl(rows: list[dict[str, Any]], tok: Any, spec: Any, tmp_path: Path, max_length: int | None,
                       mode: str) -> list[int]:
    prepared, collator = trl_prepare(rows, tok, tmp_path / "trl", max_length=max_length, truncation_mode=mode)
    st = profiles.settings("trl", max_length=max_length, truncation_mode=mode)
    assert st.profile.name == "trl-1.14.2"
    dtok, encs = pairaudit_encode(rows, tok, spec, st)
    kept = list(prepared["row"])
    assert kept == [i for i, e in enumerate(encs) if st.keeps(e)]  # the same rows survive TRL's filter
    for ex in prepared:
        e = encs[ex["row"]]
        assert (ex["prompt_ids"], ex["chosen_ids"], ex["rejected_ids"]) == (e.prompt_ids, e.chosen_ids,
                                                                              e.rejected_ids), ex["row"]
    examples = [{k: ex[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")} for ex in prepared]
    for start in range(0, len(examples), 32):
        part = examples[start:start + 32]
        batch = collator(part)
        for j in range(len(part)):
            e = encs[kept[start + j]]
            assert _unpadded(batch, j) == dtok.kept_ids(e.prompt_ids, e.chosen_ids)
            assert _unpadded(batch, len(part) + j) == dtok.kept_ids(e.prompt_ids, e.rejected_ids)
    return [i for i in range(len(rows)) if i not in set(kept)]


@pytest.mark.parametrize("mode", ["keep_start", "keep_end"])
@pytest.mark.parametrize("name", list(DATA))
def test_installed_trl_prepares_the_same_ids(name: str, mode: str, smol: dict[str, Any], tmp_path: Path) -> None:
    dropped = assert_same_as_trl(DATA[name], smol["tok"], smol["spec"], tmp_path, MAX_LENGTH, mode)
    if mode == "keep_end":
        assert dropped == []  # TRL filters only under keep_start
    elif name.startswith("ultrafeedback"):
        assert dropped, "some UltraFeedback prompts exceed 256 tokens: TRL must drop rows here"


def test_no_limit_keeps_and_truncates_nothing(smol: dict[str, Any], tmp_path: Path) -> None:
    rows = DATA["ultrafeedback"][:40]
    assert assert_same_as_trl(rows, smol["tok"], smol["spec"], tmp_path, None, "keep_start") == []


def test_tokenizer_that_adds_bos(tmp_path: Path) -> None:
    """TRL >= 0.29 tokenizes standard text with the tokenizer's special tokens (here a BOS)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from tokenizers import trainers as tk_trainers

    rows = DATA["ultrafeedback"][:60]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator([t for r in rows for t in r.values()],
                            tk_trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"],
                                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bpe.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>",
                                               unk_token="<unk>", pad_token="</s>")
    assert tok("hi")["input_ids"][0] == 1
    dropped = assert_same_as_trl(rows, tok, None, tmp_path, 200, "keep_start")
    assert dropped  # prompts of >= 200 of these tokens exist


def test_scan_drops_exactly_the_rows_trl_drops(smol: dict[str, Any], tmp_path: Path) -> None:
    rows = DATA["ultrafeedback"]
    prepared, _ = trl_prepare(rows, smol["tok"], tmp_path / "trl", max_length=MAX_LENGTH)
    trl_dropped = sorted(set(range(len(rows))) - set(prepared["row"]))
    src = write_jsonl(tmp_path / "uf.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["dropped_by_trainer"], max_length=MAX_LENGTH,
                           log=lambda m: None)
    f = audit.findings
    assert sorted(f.filter(f["check"] == "dropped_by_trainer")["row"].to_list()) == trl_dropped
    assert audit.totals["dropped"] == len(trl_dropped) and audit.totals["kept"] == len(prepared)


def test_trl_config_defaults_are_the_profile_defaults() -> None:
    args = trl.DPOConfig(output_dir="unused", report_to="none", use_cpu=True, bf16=False)
    prof = profiles.pick_profile("trl")[0]
    assert (args.max_length, args.truncation_mode) == (prof.max_length, prof.truncation_mode)
    assert not hasattr(args, "max_prompt_length") and not hasattr(args, "max_completion_length")
    assert not prof.prompt_limits


def test_rows_trl_cannot_tokenize(smol: dict[str, Any], tmp_path: Path) -> None:
    """Rows on which TRL's preprocessing raises (and so stops the whole training run) become
    malformed_record findings naming the reason; the run goes on. An empty implicit-prompt side: TRL's
    extract_prompt raises UnboundLocalError."""
    ok = {"chosen": "\n\nHuman: Hi\n\nAssistant: Hey.", "rejected": "\n\nHuman: Hi\n\nAssistant: Go away."}
    rows = [ok, {"chosen": "", "rejected": ok["rejected"]}]
    with pytest.raises(UnboundLocalError):
        trl_prepare(rows, smol["tok"], tmp_path / "trl")
    src = write_jsonl(tmp_path / "hh.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["empty_prompt"], log=lambda m: None)
    f = audit.findings.filter(audit.findings["check"] == "malformed_record")
    assert f["row"].to_list() == [1] and "extract_prompt" in f["detail"][0]


def test_conversation_whose_first_messages_differ(smol: dict[str, Any], tmp_path: Path) -> None:
    """TRL leaves an empty prompt and fails; pairaudit drops the row as prompt_mismatch (histories differ)."""
    u1, u2, a = ({"role": "user", "content": "Hi"}, {"role": "user", "content": "Hello"},
                 {"role": "assistant", "content": "Hey."})
    rows = [{"chosen": [u1, a], "rejected": [u2, a]}]
    with pytest.raises((IndexError, ValueError)):  # which one depends on TRL's set order of keys
        trl_prepare(rows, smol["tok"], tmp_path / "trl")
    src = write_jsonl(tmp_path / "conv.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["prompt_mismatch"], log=lambda m: None)
    assert audit.findings.select("row", "check", "action").rows() == [(0, "prompt_mismatch", "drop")]


# -- the legacy profile (TRL < 0.29) against TRL 0.28's code -----------------------------------------

LEGACY_CASES = [(MAX_LENGTH, 64, 128, "keep_end"), (MAX_LENGTH, 64, None, "keep_start"), (None, None, None, "keep_end")]


@pytest.mark.parametrize("limits", LEGACY_CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("name", list(DATA))
def test_legacy_profile_matches_trl_028(name: str, limits: tuple, smol: dict[str, Any]) -> None:
    from support import trl_legacy

    max_length, mpl, mcl, mode = limits
    rows = DATA[name]
    prepared, impl = trl_legacy.prepare(rows, smol["tok"], smol["dir"], mpl, mcl)
    st = profiles.settings("trl==0.28.0", max_length=max_length, max_prompt_length=mpl, max_completion_length=mcl,
                           truncation_mode=mode)
    assert st.profile.name == "trl-0.27.2" and not st.profile.drops_full_prompts, impl
    dtok, encs = pairaudit_encode(rows, smol["tok"], smol["spec"], st)
    assert len(prepared) == len(encs)
    for ex, e in zip(prepared, encs):
        if mpl is None and mcl is None:  # untruncated ids are the same
            assert (ex["prompt_input_ids"], ex["chosen_input_ids"], ex["rejected_input_ids"]) == \
                (e.prompt_ids, e.chosen_ids, e.rejected_ids), impl
        for side in ("chosen", "rejected"):
            want = trl_legacy.truncate(ex["prompt_input_ids"], ex[f"{side}_input_ids"], max_length, mode)
            assert dtok.kept_ids(e.prompt_ids, getattr(e, f"{side}_ids")) == want, impl


# -- implicit prompts that take response text: planted prefix pairs and mid-word splits ----------------

def _planted_implicit() -> list[dict[str, Any]]:
    """Real HH dialogues whose last responses are replaced: one a prefix of the other (both ways round,
    with and without a space), a shared opening sentence, a split inside a word, identical responses."""
    from pairaudit.io.formats import split_hh

    out = []
    for i, r in enumerate(DATA["hh_implicit"][:60]):
        prompt, c, rej, note = split_hh(r["chosen"], r["rejected"])
        if note:
            continue
        short = c.split(".")[0] + "."
        c, rej = [(short, short + " " + rej.strip()), (short + rej, short), (" Sure thing." + c, " Sure thing." + rej),
                  (" You’re welcome.", " You’re welcoming, and kind."), (c, c)][i % 5]
        out.append({"chosen": prompt + c, "rejected": prompt + rej})
    return out


PLANTED = _planted_implicit()


def test_trl_extract_prompt_is_what_pairaudit_reads() -> None:
    from trl.data_utils import extract_prompt

    from pairaudit.trainer.split import implicit_split, trl_extract_prompt_text

    for i, row in enumerate(PLANTED + DATA["hh_implicit"]):
        want = extract_prompt(dict(row))
        got = trl_extract_prompt_text(row["chosen"], row["rejected"])
        assert got == (want["prompt"], want["chosen"], want["rejected"]), i
        sp = implicit_split(normalise(i, row, "implicit_hh"))
        assert (sp.prompt, sp.chosen, sp.rejected) == got
    kinds = [implicit_split(normalise(i, r, "implicit_hh")) for i, r in enumerate(PLANTED)]
    assert {k.kind for k in kinds} == {"prefix", "opening", "identical"} and any(k.mid_word for k in kinds)


@pytest.mark.parametrize("mode", ["keep_start", "keep_end"])
def test_installed_trl_prepares_planted_prefix_pairs_the_same(mode: str, smol: dict[str, Any],
                                                               tmp_path: Path) -> None:
    assert_same_as_trl(PLANTED, smol["tok"], smol["spec"], tmp_path, MAX_LENGTH, mode)


def test_prefix_pair_counts_are_trls(smol: dict[str, Any], tmp_path: Path) -> None:
    """The token counts prefix_pair states are those of TRL's own prepared rows (EOS included)."""
    prepared, _ = trl_prepare(PLANTED, smol["tok"], tmp_path / "trl", max_length=None)
    audit = pairaudit.scan(write_jsonl(tmp_path / "p.jsonl", PLANTED), out=tmp_path / "out", max_length="none",
                           only=["prefix_pair", "split_word"], log=lambda m: None)
    f = audit.findings
    details = dict(f.filter(f["check"] == "prefix_pair").select("row", "detail").iter_rows())
    assert len(details) >= len(PLANTED) - 1  # every planted row but possibly one whose cut moves a whole token
    for ex in prepared:
        if ex["row"] in details:
            m = re.search(r"compares chosen (\d+) tokens? .* with rejected (\d+) tokens?", details[ex["row"]])
            assert (int(m.group(1)), int(m.group(2))) == (len(ex["chosen_ids"]), len(ex["rejected_ids"]))
    assert set(f.filter(f["check"] == "split_word")["row"].to_list()) >= {i for i in range(len(PLANTED)) if i % 5 == 3}


# -- the trainer's own objects as scan options ------------------------------------------------------------

def test_scan_takes_the_tokenizer_object_and_dpo_config(smol: dict[str, Any], tmp_path: Path) -> None:
    rows = DATA["ultrafeedback"]
    tok = transformers.AutoTokenizer.from_pretrained(str(smol["dir"]))
    args = trl.DPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, report_to="none", use_cpu=True,
                         max_length=MAX_LENGTH)
    trainer = trl.DPOTrainer(model=_tiny_model(len(tok)), ref_model=_tiny_model(len(tok)), args=args,
                             train_dataset=__import__("datasets").Dataset.from_list(
                                 [{**r, "row": i} for i, r in enumerate(rows)]), processing_class=tok)
    trl_dropped = sorted(set(range(len(rows))) - set(trainer.train_dataset["row"]))
    assert trl_dropped
    audit = pairaudit.scan(rows, out=tmp_path / "out", tokenizer=tok, trainer_args=args,
                           only=["dropped_by_trainer", "too_long"], log=lambda m: None)
    f = audit.findings
    assert sorted(f.filter(f["check"] == "dropped_by_trainer")["row"].to_list()) == trl_dropped
    cfg = audit.report["config"]
    assert (cfg["max_length"], cfg["truncation_mode"]) == (MAX_LENGTH, "keep_start")
    assert Path(cfg["tokenizer"]).is_dir()  # the object was saved once; the report names its folder
    again = pairaudit.scan(rows, out=None, tokenizer=tok, trainer_args={"max_length": MAX_LENGTH},
                           only=["dropped_by_trainer", "too_long"], log=lambda m: None)
    assert again.report["config"] == cfg and again.findings.equals(f)
    with pytest.raises(ConfigError, match="given twice"):
        pairaudit.scan(rows, out=None, trainer_args=args, max_length=512, log=lambda m: None)
    with pytest.raises(ConfigError, match="did you mean 'max_length'"):
        pairaudit.scan(rows, out=None, trainer_args={"max_lenght": 512}, log=lambda m: None)


def test_explicit_prompt_output_trains_on_whole_responses(smol: dict[str, Any], tmp_path: Path) -> None:
    """--explicit-prompt's cleaned output, given to TRL's own DPOTrainer: every completion is the whole
    response (+ EOS), where the implicit rows gave TRL only what follows the common prefix."""
    audit = pairaudit.scan(write_jsonl(tmp_path / "p.jsonl", PLANTED), out=tmp_path / "out", explicit_prompt=True,
                           only=["prefix_pair"], log=lambda m: None)
    clean = audit.load_clean(row_column=None).to_list()
    prepared, _ = trl_prepare(clean, smol["tok"], tmp_path / "trl", max_length=None)
    implicit, _ = trl_prepare(PLANTED, smol["tok"], tmp_path / "trl2", max_length=None)
    eos = smol["tok"].eos_token
    decode = smol["tok"].decode
    for ex, ex_implicit in zip(prepared, implicit):
        rec = clean[ex["row"]]
        assert decode(ex["chosen_ids"]) == rec["chosen"] + eos and decode(ex["rejected_ids"]) == rec["rejected"] + eos
        assert decode(ex["prompt_ids"]) == rec["prompt"]
        assert len(ex["chosen_ids"]) >= len(ex_implicit["chosen_ids"])
    assert sum(len(a["chosen_ids"]) > len(b["chosen_ids"]) for a, b in zip(prepared, implicit)) >= len(PLANTED) // 2
