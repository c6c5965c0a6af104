"""prefix_pair, split_word and what length_outlier and the pair view say about implicit-prompt rows whose
prompt, as TRL's extract_prompt takes it, holds response text. Real HH rows, planted prefix pairs of both
kinds (one response a prefix of the other; both opening with the same sentence) and planted mid-word
splits; the real bundled SmolLM2 tokenizer."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import HH, write_jsonl

import pairaudit
from pairaudit.io.formats import common_prefix_chars, normalise, split_hh
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.report.trainer_view import trainer_view
from pairaudit.trainer import profiles as trainers
from pairaudit.trainer.split import implicit_split, trl_extract_prompt_text
from pairaudit.trainer.tokenizer import DPOTokenizer

CHECKS = ["prefix_pair", "split_word", "length_outlier", "identical_pair"]


def hh_records(n: int) -> list[dict[str, str]]:
    with open(HH, encoding="utf-8") as fh:
        return [{k: r[k] for k in ("chosen", "rejected")} for r in map(json.loads, (next(fh) for _ in range(n)))]


def planted(rng: random.Random, n: int) -> tuple[list[dict[str, str]], dict[int, str]]:
    """Real HH rows with their last responses replaced: kind -> rows."""
    rows = hh_records(n)
    kinds: dict[int, str] = {}
    for i, r in enumerate(rows):
        prompt, c, rej, note = split_hh(r["chosen"], r["rejected"])
        if note or i % 3 == 2:
            continue
        if i % 3 == 0:  # one response is a prefix of the other (either way round)
            short = c.split(".")[0] + "."
            long = short + " " + rej.strip()
            c, rej = (short, long) if rng.random() < 0.5 else (long, short)
            kinds[i] = "prefix"
        else:  # both open with the same sentence, then differ
            opening = " I understand what you are asking, and here is what I think."
            c, rej = opening + c, opening + rej
            kinds[i] = "opening"
        rows[i] = {"chosen": prompt + c, "rejected": prompt + rej}
    return rows, kinds


@pytest.fixture(scope="module")
def tok() -> DPOTokenizer:
    t, spec = load_tokenizer(None)
    return DPOTokenizer(t, spec, trainer=trainers.settings("trl"))


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rows, kinds = planted(random.Random(0), 150)
    tmp = tmp_path_factory.mktemp("prefix")
    audit = pairaudit.scan(write_jsonl(tmp / "hh.jsonl", rows), out=tmp / "out", only=CHECKS, log=lambda m: None)
    return {"rows": rows, "kinds": kinds, "findings": audit.findings, "audit": audit}


def test_extract_prompt_text_is_trls_loop() -> None:
    rng = random.Random(1)
    cases = [("a", "a"), ("ab", "a"), ("a ", "b"), (" x", "y"), ("a b", "a c"), ("x", "x y")]
    cases += [("".join(rng.choice("ab ") for _ in range(rng.randint(1, 7))),
               "".join(rng.choice("ab ") for _ in range(rng.randint(1, 7)))) for _ in range(2000)]
    cases += [(r["chosen"], r["rejected"]) for r in hh_records(300)]
    for c, r in cases:
        assert trl_extract_prompt_text(c, r) == trainers.trl_extract_prompt(c, r), (c, r)
        assert common_prefix_chars(c, r) == len(__import__("os").path.commonprefix([c, r]))
    for a, b in cases:  # a known shared start (a prompt before each response): only the rest is compared
        for k in {0, 1, len(a) // 2}:
            if k <= common_prefix_chars(a, b):
                assert trl_extract_prompt_text(a, b, shared=k) == trainers.trl_extract_prompt(a, b), (a, b, k)


@pytest.mark.parametrize("trainer", ["trl", "trl==1.9", "trl==0.29", "trl==0.27.2"])
def test_split_word_counts_the_left_out_tokens_as_a_fresh_tokenization_does(trainer: str) -> None:
    """``split_word`` reads the prompt tokens TRL leaves out from the encoding (``prompt_left_out``) where the
    trainer tokenizes prompt and prompt + completion (joint), instead of tokenizing TRL's prompt again: the same
    count as ``len(ids(TRL's prompt)) - len(trainer prompt ids)`` on real HH rows whose cut falls inside a
    word, and on rows planted to open alike."""
    t, spec = load_tokenizer(None)
    tk = DPOTokenizer(t, spec, trainer=trainers.settings(trainer))
    rows = hh_records(900) + planted(random.Random(4), 300)[0]
    pairs = [normalise(i, r, "implicit_hh") for i, r in enumerate(rows)]
    mid = [p for p in pairs if (sp := implicit_split(p)) is not None and sp.mid_word]
    assert len(mid) > 20
    if not tk.profile.joint:
        pytest.skip("not a joint trainer: split_word tokenizes TRL's prompt itself")
    moved = []
    for p, e in zip(mid, tk.encode_pairs(mid)):
        rendered = tk.render(p)
        fresh = len(tk.text_ids(rendered[0], bool(rendered.special))) - len(e.prompt_ids)
        assert e.prompt_left_out == fresh, p.row
        moved.append(fresh)
    if tk.profile.common_prefix:  # TRL >= 1.14.2: some cuts merge tokens across the boundary, some do not
        assert any(moved) and not all(moved)
    else:  # the completion starts where the prompt's own ids end: nothing left out
        assert not any(moved)


def test_remembered_splits_are_the_pairs_own() -> None:
    """``implicit_split`` remembers the last pairs' splits: asked again it gives the same split; a pair whose
    text was replaced in place, a copy with another response and more pairs than the memo holds each get their
    own split, as computed afresh (real HH rows whose responses open alike, and ones that do not)."""
    import dataclasses

    from pairaudit.trainer import split as split_mod

    pairs = [normalise(i, r, "implicit_hh") for i, r in enumerate(hh_records(40))]
    pairs += [dataclasses.replace(p, rejected=p.chosen + " And more.") for p in pairs[:10]]  # prefix pairs
    fresh = [split_mod._implicit_split(p) for p in pairs]
    assert any(s is not None and s.absorbs for s in fresh) and any(s is not None and not s.absorbs for s in fresh)
    assert [implicit_split(p) for p in pairs] == fresh == [implicit_split(p) for p in pairs]
    p = pairs[3]
    p.rejected = p.chosen + " Also this."  # changed in place (as strip_surrogates does): not the remembered split
    assert implicit_split(p) == split_mod._implicit_split(p) != fresh[3]
    many = [dataclasses.replace(q, row=i) for i in range(3) for q in pairs] * 20  # the memo empties and refills
    assert len(many) > split_mod.MEMO_PAIRS
    assert [implicit_split(q) for q in many] == [split_mod._implicit_split(q) for q in many]


def test_every_planted_prefix_pair_is_named_with_what_the_trainer_compares(scanned: dict[str, Any]) -> None:
    f = scanned["findings"]
    got = dict(f.filter(pl.col("check") == "prefix_pair").select("row", "detail").iter_rows())
    for row, kind in scanned["kinds"].items():
        assert row in got, (row, kind)
        want = {"prefix": "one response is a prefix of the other",
                "opening": "both responses open with the same text"}[kind]
        assert re.match(r"severity (high|medium|low): " + want, got[row]) and "TRL's extract_prompt" in got[row], got[row]
        assert kind != "prefix" or got[row].startswith("severity high: "), got[row]
        assert re.search(r"compares chosen \d+ tokens? \(.*\) with rejected \d+ tokens? \(", got[row]), got[row]
    opening = [got[r] for r, k in scanned["kinds"].items() if k == "opening"]
    assert opening and all("puts 'I understand what you are asking" in d for d in opening)


def test_on_real_hh_every_shortened_completion_carries_a_finding(tok: DPOTokenizer, tmp_path: Path) -> None:
    """The done-when: on real HH rows every row whose trainer-side completion is shorter than the response
    reads (the row encoded with its text split as an explicit prompt) carries prefix_pair, or (issue 34: 1-2
    shared tokens, labelled not worth reading) a prefix_pair_score of 1 or 2 without a finding."""
    import dataclasses

    rows = hh_records(600)
    audit = pairaudit.scan(write_jsonl(tmp_path / "hh.jsonl", rows), out=tmp_path / "out", only=CHECKS,
                           log=lambda m: None)
    f = audit.findings
    named = set(f.filter(pl.col("check") == "prefix_pair")["row"].to_list())
    pairs = [normalise(i, r, "implicit_hh") for i, r in enumerate(rows)]
    trainer = tok.encode_pairs(pairs)
    as_text = tok.encode_pairs([dataclasses.replace(p, format="standard") for p in pairs])
    shorter = {i for i, (e, t) in enumerate(zip(trainer, as_text))
               if len(e.chosen_ids) < len(t.chosen_ids) or len(e.rejected_ids) < len(t.rejected_ids)}
    assert len(shorter) > 30  # real HH: ~12% of rows
    score = dict(audit.scores.select("row", "prefix_pair_score").iter_rows())
    few = {i for i in shorter if 1 <= score[i] < 3}
    assert few and shorter - few <= named and not few & named
    # and no length_outlier claims "only 1 token" about such a row without saying why
    lo = f.filter((pl.col("check") == "length_outlier") & pl.col("row").is_in(sorted(shorter)))
    assert all("prefix_pair" in d and "the trainer's" in d for d in lo["detail"].to_list())
    assert lo.height > 0  # real HH has such rows ("You're welcome!" vs "You're welcome! ...")


def test_pair_view_and_finding_agree(scanned: dict[str, Any], tok: DPOTokenizer) -> None:
    f = scanned["findings"]
    details = dict(f.filter(pl.col("check") == "prefix_pair").select("row", "detail").iter_rows())
    for row in list(scanned["kinds"])[:30]:
        pair = normalise(row, scanned["rows"][row], "implicit_hh")
        view = trainer_view(tok, pair)
        assert view is not None and not view["error"]
        m = re.search(r"compares chosen (\d+) tokens? .* with rejected (\d+) tokens?", details[row])
        assert (int(m.group(1)), int(m.group(2))) == (view["sides"]["chosen"]["total"],
                                                       view["sides"]["rejected"]["total"]), details[row]
        sp = implicit_split(pair)
        assert view["split"] and sp.marked(30) in view["split"]
        # the view's prompt is the trainer's: it ends with the shared opening the finding names
        took = re.search(r"puts '(.*?)' \(", details[row]).group(1)
        start = view["prompt"]["text"].rfind("Assistant:") + len("Assistant:")
        assert view["prompt"]["text"][start:].strip().startswith(took.rstrip("…")), (took, view["prompt"]["text"])


def test_length_outlier_does_not_contradict_the_text(scanned: dict[str, Any]) -> None:
    f = scanned["findings"]
    lo = f.filter((pl.col("check") == "length_outlier") & pl.col("row").is_in(list(scanned["kinds"])))
    for d in lo["detail"].to_list():
        assert d.startswith("the trainer's ") and "prefix_pair_score in scores.parquet" in d, d


@pytest.mark.parametrize(("chosen", "rejected", "marked"), [
    (" You’re welcome.", " You’re welcoming, and kind.", "welcom|e."),
    (" Thanks! I think so.", " Thanks! I thought not.", "I th|ink"),
])
def test_split_inside_a_word(chosen: str, rejected: str, marked: str, tmp_path: Path, tok: DPOTokenizer) -> None:
    prompt = "\n\nHuman: Are you sure?\n\nAssistant:"
    rows = [{"chosen": prompt + chosen, "rejected": prompt + rejected},
            {"chosen": prompt + " Yes.", "rejected": prompt + " No."}]
    audit = pairaudit.scan(write_jsonl(tmp_path / "hh.jsonl", rows), out=tmp_path / "out", only=CHECKS,
                           log=lambda m: None)
    f = audit.findings.filter(pl.col("check") == "split_word")
    assert f["row"].to_list() == [0] and f["action"].to_list() == ["flag"]
    assert "ends inside a word" in f["detail"][0]
    assert audit.report["checks"]["split_word"]["rows"] == 1  # the count
    view = trainer_view(tok, normalise(0, rows[0], "implicit_hh"))
    assert "(inside a word)" in view["split"] and marked.split("|")[0][-3:] + "|" in view["split"]


def test_explicit_prompt_rows_are_not_touched(tmp_path: Path) -> None:
    rows = [{"prompt": "Hi", "chosen": " You’re welcome!", "rejected": " You’re welcome! Bye."}]
    audit = pairaudit.scan(write_jsonl(tmp_path / "s.jsonl", rows), out=tmp_path / "out", only=CHECKS,
                           log=lambda m: None)
    assert audit.findings.filter(pl.col("check").is_in(["prefix_pair", "split_word"])).height == 0


def _hh_conv(text: str) -> list[dict[str, str]]:
    parts = re.split(r"\n\n(Human|Assistant): ?", text)
    return [{"role": "user" if role == "Human" else "assistant", "content": content}
            for role, content in zip(parts[1::2], parts[2::2])]


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "dataset", "conversational"])
def test_explicit_prompt_writes_the_text_split(kind: str, scanned: dict[str, Any], tmp_path: Path) -> None:
    """--explicit-prompt: the cleaned output holds the prompt up to the last assistant turn and the whole
    responses; scanned again, no row is a prefix_pair any more and every record round-trips."""
    import datasets

    rows = [dict(r, id=i) for i, r in enumerate(scanned["rows"][:40])]
    if kind == "conversational":
        rows = [{"chosen": _hh_conv(r["chosen"]), "rejected": _hh_conv(r["rejected"]), "id": r["id"]} for r in rows]
    if kind == "parquet":
        src: Any = tmp_path / "in.parquet"
        pl.DataFrame(rows).write_parquet(src)
    elif kind == "dataset":
        src = datasets.Dataset.from_list(rows)
    else:
        src = write_jsonl(tmp_path / "in.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["prefix_pair"], explicit_prompt=True, log=lambda m: None)
    if kind != "conversational":  # message lists: TRL's prompt takes messages only when a list is a prefix
        assert audit.findings.filter(pl.col("check") == "prefix_pair").height > 10  # the source's rows
    clean = audit.load_clean(row_column=None).to_list()
    assert len(clean) == len(rows) and [r["id"] for r in clean] == [r["id"] for r in rows]
    for rec, src_rec in zip(clean, rows):
        if kind == "conversational":
            assert rec["prompt"] + rec["chosen"] == src_rec["chosen"] and rec["chosen"][-1]["role"] == "assistant"
            assert rec["prompt"] + rec["rejected"] == src_rec["rejected"]
        else:
            assert rec["prompt"].endswith("\n\nAssistant:")
            assert rec["prompt"] + rec["chosen"] == src_rec["chosen"]
            assert rec["prompt"] + rec["rejected"] == src_rec["rejected"]
    again = pairaudit.scan(audit.load_clean(row_column=None), out=tmp_path / "again",
                           only=["prefix_pair", "split_word"], log=lambda m: None)
    assert again.findings.height == 0
