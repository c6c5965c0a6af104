"""The trainer's own objects as scan options: a ``transformers`` tokenizer and a TRL ``DPOConfig``.

``pairaudit.scan(ds, tokenizer=tok, trainer_args=DPOConfig(...))`` audits with exactly the tokenizer and
limits the user trains with. A scan records its settings as text (report.json ``config``, so a rerun, the
report's trainer view and the Ray workers rebuild them), so a tokenizer object is saved once with
``save_pretrained`` into the cache, in a folder named by the sha256 of the saved files: the same tokenizer
gives the same folder (and the same report.json). A ``DPOConfig`` (or a dict of its fields) gives
``max_length`` and ``truncation_mode`` (and, for TRL < 0.29, ``max_prompt_length`` /
``max_completion_length``); a limit also passed as its own option must agree with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

from pairaudit.cache import cache_write
from pairaudit.errors import ConfigError
from pairaudit.schema import did_you_mean

LIMITS = ("max_length", "max_prompt_length", "max_completion_length", "truncation_mode")


def is_tokenizer(obj: Any) -> bool:
    return not isinstance(obj, (str, Path)) and obj is not None and callable(getattr(obj, "save_pretrained", None)) \
        and hasattr(obj, "convert_tokens_to_ids")


def tokenizer_folder(tok: Any, cache_dir: Path) -> str:
    """A folder holding ``tok`` as ``save_pretrained`` writes it (reused when the same tokenizer was saved
    before); what ``tokenizer=`` records instead of the object."""
    if not is_tokenizer(tok):
        raise ConfigError(f"tokenizer= got a value of type {type(tok).__name__}, which is neither a path / hub id nor a "
                          "transformers tokenizer",
                          expected="a str or Path (HF folder or id, or a .gguf file), or a PreTrainedTokenizerBase "
                                   "such as AutoTokenizer.from_pretrained(...)",
                          fix="pass the tokenizer your trainer gets as processing_class, or its folder")

    def save(tmp: Path) -> None:
        try:
            tok.save_pretrained(str(tmp))
        except OSError:
            raise
        except Exception as exc:
            if "os error" in str(exc):  # the file system's (tokenizers reports it as a plain Exception)
                raise
            raise ConfigError(f"tokenizer= could not be saved for the scan: {type(exc).__name__}: {exc}",
                              fix="pass the tokenizer's folder instead (tokenizer='path/to/folder')") from exc

    def named(tmp: Path) -> str:
        digest = hashlib.sha256()
        for f in sorted(tmp.iterdir()):
            digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        return f"object-{digest.hexdigest()[:32]}"

    final = cache_write(Path(cache_dir) / "tokenizers", save, name=named, required=True,
                        what="the tokenizer object (a scan records it as that folder)",
                        otherwise="or save it yourself and pass its folder: tok.save_pretrained('DIR'), "
                                  "tokenizer='DIR'")
    return str(final)


def _fields(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return dict(args)
    if dataclasses.is_dataclass(args) and not isinstance(args, type):
        names = {f.name for f in dataclasses.fields(args)}
        return {k: getattr(args, k) for k in LIMITS if k in names}
    raise ConfigError(f"trainer_args= got a value of type {type(args).__name__}",
                      expected="a trl.DPOConfig (the args you pass to DPOTrainer) or a dict of its fields, "
                               "e.g. {'max_length': 2048}")


def _dpo_fields() -> set[str] | None:
    try:
        import trl
    except ImportError:
        return None
    return {f.name for f in dataclasses.fields(trl.DPOConfig)}


def trainer_options(args: Any, given: dict[str, Any]) -> dict[str, Any]:
    """ScanConfig options (the limits) from a DPOConfig or dict. ``given``: options the caller also passed
    (a limit given both ways must agree). Unknown dict keys are an error with a "did you mean"."""
    values = _fields(args)
    if isinstance(args, dict):
        known = _dpo_fields()
        for key in values:
            if (known is not None and key not in known) or (known is None and key not in LIMITS):
                choices = known if known is not None else LIMITS
                raise ConfigError(f"trainer_args has unknown field {key!r}{did_you_mean(key, choices)}",
                                  expected="DPOConfig field names" + ("" if known else f" ({', '.join(LIMITS)})"))
    out: dict[str, Any] = {}
    for key in LIMITS:
        if key not in values:
            continue
        value = values[key]
        if key == "truncation_mode" and value is not None:
            value = str(getattr(value, "value", value))
        if value is None and key != "truncation_mode":
            value = "none"  # DPOConfig: None = no limit
        if key in given and given[key] not in ("auto", value) and not (value == "none" and given[key] is None):
            raise ConfigError(f"{key} is given twice: {given[key]!r} and trainer_args.{key} = {values[key]!r}",
                              fix=f"drop the {key}= option (trainer_args carries it) or make them agree")
        out[key] = value
    return out
