"""Trainer profiles: choosing one, limits (none / nonsense), what each does to tokens, the trainer's own
row filter (dropped_by_trainer), and the assumptions every output states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.datatypes import Pair
from pairaudit.errors import ConfigError
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer import profiles
from pairaudit.trainer.tokenizer import DPOTokenizer
from pairaudit.trainer.truncation import kept_sequence

runner = CliRunner()
TOKEN_CHECKS = ["too_long", "truncation_identical", "dropped_by_trainer"]


@pytest.fixture(scope="module")
def smol() -> tuple:
    return load_tokenizer(None)


@pytest.mark.parametrize("asked,profile", [
    ("trl==1.16.0", "trl-1.14.2"), ("trl==1.14.2", "trl-1.14.2"), ("trl==1.14.1", "trl-1.9"), ("trl==1.9.0", "trl-1.9"),
    ("trl==1.8.0", "trl-0.29"), ("trl==0.29.0", "trl-0.29"), ("trl==0.28.0", "trl-0.27.2"), ("trl==0.27.2", "trl-0.27.2"),
    ("trl==0.27.1", "trl-0.20"), ("trl==0.20.0", "trl-0.20"), ("trl==2.0.0", "trl-1.14.2"), ("trl-legacy", "trl-0.27.2"),
    ("trl==1.9", "trl-1.9"), ("trl==0.29", "trl-0.29"), ("trl==1.14", "trl-1.9"), ("trl==0.20", "trl-0.20"),  # "1.9" is 1.9.0
    ("trl-latest", "trl-1.14.2"), ("TRL-0.29", "trl-0.29"),
])
def test_profile_by_name_or_version(asked: str, profile: str) -> None:
    assert profiles.pick_profile(asked)[0].name == profile


def test_installed_trl_decides_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(profiles, "installed_trl", lambda: "0.28.0")
    st = profiles.settings("trl")
    assert (st.profile.name, st.max_prompt_length, st.truncation_mode) == ("trl-0.27.2", 512, "keep_end")
    assert st.chosen_by == "installed TRL 0.28.0"
    monkeypatch.setattr(profiles, "installed_trl", lambda: None)
    st = profiles.settings("trl")
    assert st.profile is profiles.PROFILES[0] and st.chosen_by.startswith("newest known")
    assert (st.max_length, st.max_prompt_length, st.truncation_mode) == (1024, None, "keep_start")


@pytest.mark.parametrize("asked", ["trl==0.15.0", "axolotl", "trl==latest"])
def test_unknown_trainers_are_errors(asked: str) -> None:
    with pytest.raises(ConfigError) as err:
        profiles.pick_profile(asked)
    assert "--trainer" in str(err.value) or "profile" in str(err.value)


@pytest.mark.parametrize("value,want", [("none", None), ("None", None), (None, None), ("2048", 2048), (7, 7),
                                        ("auto", "auto")])
def test_limits_accept_numbers_none_and_auto(value: object, want: object) -> None:
    assert profiles.parse_limit(value, "--max-length") == want


@pytest.mark.parametrize("value", [0, "0", -3, "-3", "abc", 2.5, True, "1e3"])
def test_nonsense_limits_are_errors(value: object) -> None:
    with pytest.raises(ConfigError) as err:
        profiles.parse_limit(value, "--max-prompt-length")
    assert "--max-prompt-length" in str(err.value) and "none" in str(err.value)


def test_prompt_limits_only_where_the_trainer_has_them() -> None:
    with pytest.raises(ConfigError) as err:
        profiles.settings("trl-1.14.2", max_prompt_length=256)
    assert "trl-legacy" in str(err.value) and "max_prompt_length" in str(err.value)
    assert profiles.settings("trl-1.14.2", max_prompt_length=None, max_completion_length="none").max_prompt_length is None
    legacy = profiles.settings("trl-legacy", max_completion_length=300)
    assert (legacy.max_prompt_length, legacy.max_completion_length, legacy.truncation_mode) == (512, 300, "keep_end")
    with pytest.raises(ConfigError):
        profiles.settings("trl", truncation_mode="keep_middle")
    assert any("deprecated" in n for n in profiles.settings("trl-1.14.2", truncation_mode="keep_end").notes)


def test_trainer_filter_is_prompt_at_least_max_length() -> None:
    st = profiles.settings("trl-1.14.2", max_length=10)
    assert st.keeps(9) and not st.keeps(10) and not st.keeps(11)
    assert profiles.settings("trl-1.14.2", max_length=10, truncation_mode="keep_end").keeps(50)  # keep_end: no filter
    assert profiles.settings("trl-1.14.2", max_length=None).keeps(10**6)
    assert profiles.settings("trl-0.29", max_length=10).keeps(50)  # filter came with TRL 1.9
    assert profiles.settings("trl-legacy", max_length=10).keeps(50)


def test_extract_prompt_like_trl() -> None:
    assert profiles.trl_extract_prompt("Q: hi A: yes", "Q: hi A: no") == ("Q: hi A:", " yes", " no")
    assert profiles.trl_extract_prompt("same", "same") == ("sam", "e", "e")  # TRL's off-by-one
    assert profiles.trl_extract_prompt(["u", "a"], ["u", "b"]) == (["u"], ["a"], ["b"])
    with pytest.raises(ValueError):
        profiles.trl_extract_prompt("", "x")


def test_joint_tokenization_and_eos(smol: tuple) -> None:
    tok, spec = smol
    eos = tok.eos_token
    pair = Pair(0, "standard", "how to cook t-bone in the oven", "To cook it, preheat." + eos, "Just grill it.")
    new = DPOTokenizer(tok, spec, trainer=profiles.settings("trl-1.14.2"))
    (enc,) = new.encode_pairs([pair])
    whole = tok(pair.prompt + pair.chosen)["input_ids"]
    assert enc.prompt_ids + enc.chosen_ids == whole  # prompt + completion tokenized as one text
    assert enc.chosen_ids.count(tok.eos_token_id) == 1  # EOS text not added twice
    assert enc.rejected_ids[-1] == tok.eos_token_id and enc.content_lengths()[2] == len(enc.rejected_ids) - 1
    old = DPOTokenizer(tok, spec, trainer=profiles.settings("trl-legacy"))
    (enc_old,) = old.encode_pairs([pair])
    assert enc_old.prompt_ids == tok(pair.prompt, add_special_tokens=False)["input_ids"]
    assert enc_old.chosen_ids[-2:] == [tok.eos_token_id] * 2  # TRL < 0.29 appends the EOS id regardless


def test_conversational_eos_depends_on_the_trl_version(smol: tuple) -> None:
    tok, spec = smol
    pair = Pair(0, "conversational", "Hi", "Hey", "No", [{"role": "user", "content": "Hi"}],
                [{"role": "assistant", "content": "Hey"}], [{"role": "assistant", "content": "No"}])
    ids = {}
    for name in ("trl-1.14.2", "trl-0.27.2", "trl-0.20"):
        (enc,) = DPOTokenizer(tok, spec, trainer=profiles.settings(name)).encode_pairs([pair])
        ids[name] = enc.chosen_ids
    end = tok("<|im_end|>\n", add_special_tokens=False)["input_ids"]
    assert ids["trl-1.14.2"][-len(end):] == end and ids["trl-1.14.2"] == ids["trl-0.27.2"]
    assert ids["trl-0.20"] == ids["trl-0.27.2"] + [tok.eos_token_id]  # EOS appended to chat before 0.27.2


def test_kept_sequence_cuts_like_trl() -> None:
    prompt, comp = list(range(10)), [100, 101, 102]
    assert kept_sequence(prompt, comp, (4, 0), "keep_start") == ([0, 1, 2, 3], [])  # keep_start: the start
    assert kept_sequence(prompt, comp, (10, 2), "keep_start") == (prompt, [100, 101])
    assert kept_sequence(prompt, comp, (1, 3), "keep_end") == ([9], [100, 101, 102])  # keep_end: the end
    assert kept_sequence(prompt, comp, (0, 2), "keep_end") == ([], [101, 102])
    # TRL < 0.29 with max_prompt_length 6: the prompt keeps its end, also without the keyword
    assert kept_sequence(prompt, comp, (6, 2), "keep_start") == ([4, 5, 6, 7, 8, 9], [100, 101])
    # TRL < 0.29: the prompt keeps its last 6 tokens, then keep_start keeps the first 5 of prompt + completion
    assert kept_sequence(prompt, comp, (5, 0), "keep_start", max_prompt_length=6, max_completion_length=2) == \
        ([4, 5, 6, 7, 8], [])


def test_keyword_construction_keeps_the_old_semantics(smol: tuple) -> None:
    tok, spec = smol
    d = DPOTokenizer(tok, spec, max_length=64, max_prompt_length=16)
    assert d.trainer.profile is profiles.KEYWORD_PROFILE and d.truncation_mode == "keep_end"
    assert (d.max_length, d.max_prompt_length, d.max_completion_length) == (64, 16, None)
    assert DPOTokenizer(tok, spec).max_prompt_length == 512


def _prompt_tokens(text: str) -> int:
    tok, spec = load_tokenizer(None)
    pair = Pair(0, "standard", text, " yes", " no")
    (enc,) = DPOTokenizer(tok, spec, trainer=profiles.settings("trl")).encode_pairs([pair])
    return len(enc.prompt_ids)


def test_dropped_by_trainer_at_the_boundary(tmp_path: Path) -> None:
    prompt = "Please summarise the following paragraph about rivers and their deltas in two sentences."
    n = _prompt_tokens(prompt)
    rows = [{"prompt": prompt, "chosen": " yes", "rejected": " no"}]
    src = write_jsonl(tmp_path / "p.jsonl", rows)

    def findings(**kw: object) -> set[tuple]:
        a = pairaudit.scan(src, out=tmp_path / "out", only=TOKEN_CHECKS, log=lambda m: None, **kw)
        return set(a.findings.select("check", "action").rows())

    assert findings(max_length=n + 1) == {("too_long", "flag")}  # prompt fits, the completion is cut
    assert findings(max_length=n) == {("too_long", "flag"), ("dropped_by_trainer", "drop")}  # prompt == max_length
    assert findings(max_length=n, truncation_mode="keep_end") == {("too_long", "flag")}
    # TRL before 1.9 keeps the row: no completion token survives, a zero-gradient pair
    assert findings(max_length=n, trainer="trl-0.29") == {("too_long", "flag"), ("truncation_identical", "drop")}
    assert findings(max_length=None) == set()


def test_truncation_identical_under_keep_start(tmp_path: Path) -> None:
    shared = "Here is a long shared opening that both answers use before they differ. " * 3
    rows = [{"prompt": "Continue.", "chosen": shared + "Answer A.", "rejected": shared + "Answer B."}]
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    a = pairaudit.scan(src, out=tmp_path / "out", only=TOKEN_CHECKS, max_length=30, log=lambda m: None)
    assert sorted(a.findings.select("check", "field").rows()) == [
        ("too_long", "chosen"), ("too_long", "rejected"), ("truncation_identical", "rejected")]
    a = pairaudit.scan(src, out=tmp_path / "out", only=TOKEN_CHECKS, max_length=30, trainer="trl-legacy",
                       log=lambda m: None)
    assert "truncation_identical" not in a.findings["check"].to_list()  # keep_end keeps the differing ends


def test_config_file_selects_the_legacy_trainer(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "word " * 40, "chosen": "yes", "rejected": "no"}])
    cfg = tmp_path / "c.toml"
    cfg.write_text('trainer = "trl-legacy"\nmax_prompt_length = 16\nmax_completion_length = "none"\n')
    a = pairaudit.scan(src, out=tmp_path / "out", only=TOKEN_CHECKS, config_file=cfg, log=lambda m: None)
    assert a.findings.select("check", "field").rows() == [("too_long", "prompt")]
    c = a.report["config"]
    assert (c["trainer"], c["max_length"], c["max_prompt_length"], c["truncation_mode"]) == \
        ("trl-0.27.2", 1024, 16, "keep_end")
    assert a.report["assumptions"]["trainer"]["from_profile_defaults"] == ["max_length", "truncation_mode"]


@pytest.mark.parametrize("args,message", [
    (["--max-prompt-length", "0"], "would cut every sequence to nothing"),
    (["--max-length", "abc"], "is not a length"),
    (["--max-prompt-length", "256"], "--trainer trl-legacy"),
    (["--trainer", "nope"], "is not a known trainer"),
    (["--truncation-mode", "left"], "keep_start or keep_end"),
])
def test_cli_rejects_nonsense_limits(tmp_path: Path, args: list[str], message: str) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "Q?", "chosen": "A.", "rejected": "B."}])
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "o"), "-q", *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "o").exists()


def test_cli_none_means_no_limit(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "word " * 40, "chosen": "yes", "rejected": "no"}])
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "o"), "-q", "--trainer", "trl==0.28.0",
                              "--max-prompt-length", "none", "--max-length", "none", "--only", "too_long"])
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert (rep["config"]["max_length"], rep["config"]["max_prompt_length"]) == (None, None)
    assert rep["checks"]["too_long"]["rows"] == 0


def test_every_output_states_the_assumptions(tmp_path: Path, smol: tuple) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "Q?", "chosen": "A fine answer.", "rejected": "Bad."}])
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "o"), "--only", "too_long"],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "tokenizer: bundled:SmolLM2-135M-Instruct" in res.output
    assert "trainer: trl-1.14.2" in res.output and "max_length 1024, truncation_mode keep_start" in res.output
    assert "lengths are in SmolLM2-135M-Instruct tokens" in res.output and "--tokenizer PATH|ID" in res.output
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    a = rep["assumptions"]
    assert a["tokenizer"]["bundled_default"] is True and a["tokenizer"]["source"].endswith(".gguf")
    assert len(a["tokenizer"]["sha256"]) == 64
    assert a["trainer"]["profile"] == "trl-1.14.2" and a["trainer"]["row_filter"]
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Assumptions" in html and "SmolLM2-135M-Instruct tokens" in html and "keep_start" in html

    folder = tmp_path / "my-tokenizer"  # the training tokenizer given explicitly: no SmolLM2 note
    smol[0].save_pretrained(str(folder))
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "o2"), "--only", "too_long",
                              "--tokenizer", str(folder), "--max-length", "2048"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert f"tokenizer: {folder}" in res.output and "SmolLM2-135M-Instruct tokens" not in res.output
    a = json.loads((tmp_path / "o2" / "report.json").read_text())["assumptions"]
    assert a["tokenizer"]["bundled_default"] is False and a["tokenizer"]["source"] == str(folder.resolve())
    assert a["trainer"]["max_length"] == 2048 and "max_length" not in a["trainer"]["from_profile_defaults"]
