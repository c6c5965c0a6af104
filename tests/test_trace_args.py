"""``training_args.bin`` read without running code: real files written by the installed transformers and TRL are
read by default (no --trust-pickle); pickles that would run code, or hold anything beyond argument classes, their
enums and plain values, are refused before anything is called."""

from __future__ import annotations

import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from pairaudit.trace import settings  # noqa: E402
from pairaudit.trace.args_pickle import Refused, read_args  # noqa: E402


def _resolve(folder: Path, **kw: Any) -> settings.TraceSettings:
    return settings.resolve(folder, meta=None, state=None, state_path=None, settings_file=None, assignments={},
                            trust_pickle=kw.get("trust_pickle", False))


def test_transformers_training_args_bin_is_read_without_trust_pickle(tmp_path: Path) -> None:
    args = transformers.TrainingArguments(str(tmp_path / "o"), seed=77, gradient_accumulation_steps=3, report_to=[],
                                          use_cpu=True, per_device_train_batch_size=5, data_seed=9,
                                          dataloader_drop_last=True, lr_scheduler_type="cosine", warmup_steps=12,
                                          accelerator_config={"even_batches": False})
    args.world_size  # noqa: B018 - what Trainer does before saving: sets up the distributed state
    torch.save(args, str(tmp_path / "training_args.bin"))
    d = read_args(tmp_path / "training_args.bin")
    assert d["_class"] == "transformers.training_args.TrainingArguments"
    assert d["lr_scheduler_type"] == "cosine" and d["save_strategy"] == "steps"  # enums as their values
    s = _resolve(tmp_path)
    assert (s.seed, s.data_seed, s.gradient_accumulation_steps, s.train_batch_size) == (77, 9, 3, 5)
    assert s.dataloader_drop_last is True and s.even_batches is False and s.world_size == 1
    assert "training_args.bin" in s.sources["seed"] and "--trust-pickle" not in s.sources["seed"]
    assert s.sources["world_size"].endswith("(distributed_state.num_processes)")
    assert s.run_args["warmup_steps"] == 12 and not s.notes


def test_trl_dpo_config_bin_is_read_without_trust_pickle(tmp_path: Path) -> None:
    trl = pytest.importorskip("trl")
    cfg = trl.DPOConfig(str(tmp_path / "o"), seed=7, gradient_accumulation_steps=2, max_length=256, beta=0.25,
                        fp16=False, report_to=[], use_cpu=True, truncation_mode="keep_end")
    torch.save(cfg, str(tmp_path / "training_args.bin"))
    s = _resolve(tmp_path)
    assert (s.seed, s.gradient_accumulation_steps, s.max_length, s.beta, s.truncation_mode) == (7, 2, 256, 0.25,
                                                                                                "keep_end")
    assert s.run_args["_class"] == "trl.trainer.dpo_config.DPOConfig" and s.run_args["max_grad_norm"] == 1.0


class _Reduce:
    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> Any:
        return (self.fn, self.args)


def _payloads(marker: Path) -> dict[str, Any]:
    cfg = transformers.TrainingArguments("o", report_to=[], use_cpu=True)
    cfg.__dict__["hidden"] = _Reduce(Path.write_text, (marker, "pwned"))  # a payload inside a genuine object
    return {
        "os.system": _Reduce(os.system, (f"touch {marker}",)),
        "Path.write_text": _Reduce(Path.write_text, (marker, "pwned")),
        "eval": _Reduce(eval, (f"open({str(marker)!r}, 'w')",)),
        "nested in TrainingArguments": cfg,
        "a transformers function": _Reduce(transformers.utils.hub.cached_file, ("x", "y")),
        "a transformers non-dataclass": _Reduce(transformers.Trainer, ()),
        "a user class": _Reduce(_Reduce, (print, ())),
        "a plain dict": {"seed": 3},
        "a tensor": {"w": torch.zeros(2)},
    }


@pytest.mark.parametrize("name", list(_payloads(Path("x"))))
def test_malicious_or_foreign_pickles_are_refused_and_never_run(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "pwned.txt"
    torch.save(_payloads(marker)[name], str(tmp_path / "training_args.bin"))
    with pytest.raises(Refused):
        read_args(tmp_path / "training_args.bin")
    s = _resolve(tmp_path)
    assert not marker.exists()
    assert any("--trust-pickle" in n and "was not read" in n for n in s.notes)
    assert "seed" in s.assumed


def test_legacy_or_broken_files_are_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned.txt"
    (tmp_path / "training_args.bin").write_bytes(pickle.dumps(_Reduce(os.system, (f"touch {marker}",))))
    with pytest.raises(Refused, match="not a torch.save zip"):
        read_args(tmp_path / "training_args.bin")
    with zipfile.ZipFile(tmp_path / "training_args.bin", "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02garbage")
    with pytest.raises(Refused, match="not a readable pickle"):
        read_args(tmp_path / "training_args.bin")
    assert not marker.exists()


def test_trust_pickle_still_reads_what_the_safe_reader_refuses(tmp_path: Path) -> None:
    torch.save({"seed": 5, "gradient_accumulation_steps": 6}, str(tmp_path / "training_args.bin"))
    assert "seed" in _resolve(tmp_path).assumed
    s = _resolve(tmp_path, trust_pickle=True)
    assert (s.seed, s.gradient_accumulation_steps) == (5, 6) and "--trust-pickle" in s.sources["seed"]


@pytest.mark.parametrize("trust", [False, True])
def test_a_foreign_run_folder_bin_does_not_hide_a_checkpoints_arguments(tmp_path: Path, trust: bool) -> None:
    """B8 (issue 38's checker): a run folder's training_args.bin written by torch.save({'x': 1}) was "no
    arguments", silently, and hid the valid one of checkpoint-4. It is named and passed over; the checkpoint's
    arguments are read and the note says which file they came from."""
    torch.save({"x": 1}, str(tmp_path / "training_args.bin"))
    ckpt = tmp_path / "checkpoint-4"
    ckpt.mkdir()
    args = transformers.TrainingArguments(str(tmp_path / "o"), seed=31, gradient_accumulation_steps=4, report_to=[],
                                          use_cpu=True)
    torch.save(args, str(ckpt / "training_args.bin"))
    s = _resolve(tmp_path, trust_pickle=trust)
    assert (s.seed, s.gradient_accumulation_steps) == (31, 4)
    assert str(ckpt / "training_args.bin") in s.sources["seed"]
    notes = " ".join(s.notes)
    assert f"{tmp_path / 'training_args.bin'} was not read" in notes
    assert f"the run's arguments were read from {ckpt / 'training_args.bin'}" in notes
    if trust:
        assert "without any TrainingArguments field" in notes


@pytest.mark.parametrize("trust", [False, True])
def test_a_lone_foreign_dict_is_named_and_passed_over_without_a_trust_pickle_hint(tmp_path: Path,
                                                                                  trust: bool) -> None:
    """BR5 (issue 38's checker): torch.save({'x': 1}) is read in full by the safe reader; the note said "pass
    --trust-pickle", which reads the same dict. It is passed over with the settings left to --set, either way."""
    torch.save({"x": 1}, str(tmp_path / "training_args.bin"))
    s = _resolve(tmp_path, trust_pickle=trust)
    notes = " ".join(s.notes)
    assert "without any TrainingArguments field" in notes and "--trust-pickle" not in notes, notes
    assert "seed" in s.assumed


@pytest.mark.parametrize("content", ["list", "random", "empty", "plain pickle", "legacy torch.save"])
def test_the_trust_pickle_hint_only_where_the_flag_can_read_arguments(tmp_path: Path, content: str) -> None:
    """helper-41 (issue 38): a list, random bytes, an empty file or a plain pickle.dump were "not read; pass
    --trust-pickle", which then failed (exit 2): the safe reader saw all they hold, or they are no torch.save
    file. Only a legacy (non-zip) torch.save file, which --trust-pickle does read, keeps the hint."""
    import io
    import pickle

    path = tmp_path / "training_args.bin"
    if content == "list":
        torch.save([1, 2, 3], str(path))
    elif content == "legacy torch.save":
        buf = io.BytesIO()
        torch.save({"seed": 9}, buf, _use_new_zipfile_serialization=False)
        path.write_bytes(buf.getvalue())
    else:
        path.write_bytes({"random": bytes(range(256)) * 2, "empty": b"",
                          "plain pickle": pickle.dumps({"seed": 9})}[content])
    notes = " ".join(_resolve(tmp_path).notes)
    assert "was not read" in notes and ("--trust-pickle" in notes) == (content == "legacy torch.save"), notes
    if content == "legacy torch.save":
        assert _resolve(tmp_path, trust_pickle=True).seed == 9
