"""The training tokenizer: loaded from a HF folder or id, a GGUF file or the bundled SmolLM2 GGUF, and
what it and the trainer assume (report.json ``assumptions``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairaudit.cache import cache_write
from pairaudit.models.loading import BUNDLED_LM_NAME, ModelSpec, hub_error, resolve_model
from pairaudit.trainer.profiles import TrainerSettings


def assumptions(spec: ModelSpec | None, trainer: TrainerSettings, *, display: str | None = None) -> dict[str, Any]:
    """report.json ``assumptions``: the tokenizer (name, source, sha256, bundled default or not) and the
    trainer profile with its limits; ``notes`` are the lines the terminal summary repeats."""
    bundled = spec is not None and spec.display.startswith("bundled:")
    tok: dict[str, Any] = {"name": display or (spec.display if spec else None),
                           "source": (str(Path(spec.path) / spec.gguf_file) if spec and spec.gguf_file
                                      else spec.path if spec else None),
                           "sha256": spec.sha256 if spec else None, "bundled_default": bundled}
    notes = list(trainer.notes)
    if bundled:
        notes.insert(0, f"lengths are in {BUNDLED_LM_NAME} tokens (the bundled default), not your model's: pass "
                        "--tokenizer PATH|ID with your training tokenizer (tokenizer=... in Python)")
    if trainer.chosen_by.startswith("newest known"):
        notes.append(f"TRL is not installed here: assuming {trainer.profile.title}; pass --trainer trl==VERSION "
                     "for the TRL you train with")
    return {"tokenizer": tok, "trainer": trainer.to_json(), "notes": notes}


_TOKENIZER_CACHE: dict[tuple[str, str | None], Any] = {}


def load_tokenizer(spec_arg: str | None, cache_dir: Path | None = None, *, trust_remote_code: bool = False,
                   option: str = "--tokenizer") -> tuple[Any, ModelSpec]:
    """Load the training tokenizer: a HF folder or id, a GGUF file, or the bundled SmolLM2 GGUF.

    Parsing a GGUF file takes seconds, so its tokenizer is saved once under ``cache_dir`` (keyed
    by the file's sha256) and reloaded from there. ``option``: the command-line option that named it (errors
    name it in their fix).
    """
    spec = resolve_model(spec_arg)
    key = (spec.path, spec.gguf_file)
    if key in _TOKENIZER_CACHE:
        return _TOKENIZER_CACHE[key], spec
    try:
        if spec.gguf_file and cache_dir is not None and spec.sha256:
            saved = Path(cache_dir) / "tokenizers" / spec.sha256[:32]
            if (saved / "tokenizer_config.json").exists():
                tok = _load_saved(saved)
            else:
                from transformers import AutoTokenizer

                tok = AutoTokenizer.from_pretrained(spec.path, gguf_file=spec.gguf_file)
                cache_write(saved.parent, lambda tmp: tok.save_pretrained(str(tmp)), name=saved.name,
                            what="the tokenizer parsed from the GGUF file")
        else:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(spec.path, trust_remote_code=trust_remote_code,
                                                **spec.from_pretrained_kwargs())
    except Exception as exc:
        raise hub_error(spec, "tokenizer", exc, option) from exc
    _TOKENIZER_CACHE[key] = tok
    return tok, spec


_FAST_CLASSES = ("TokenizersBackend", "PreTrainedTokenizerFast")  # what save_pretrained of a GGUF tokenizer writes


def _load_saved(folder: Path) -> Any:
    """A GGUF file's tokenizer as ``load_tokenizer`` saved it: through ``PreTrainedTokenizerFast`` (the class
    ``AutoTokenizer`` picks for it, the same object) when the folder names that class, which spares importing
    torch (``AutoTokenizer`` imports the model configuration code, and with it torch: ~1-2 s in every pool worker
    of a scan); any other class through ``AutoTokenizer``."""
    import json

    try:
        cls = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8")).get("tokenizer_class")
    except (OSError, ValueError):
        cls = None
    if cls in _FAST_CLASSES:
        from transformers import PreTrainedTokenizerFast

        return PreTrainedTokenizerFast.from_pretrained(str(folder))
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))
