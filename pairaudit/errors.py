"""Errors that reach users. Each says what was found, what was expected and how to fix it."""

from __future__ import annotations

from collections.abc import Iterable


class PairauditError(Exception):
    """Base class: an error the CLI prints without a traceback (exit code 2)."""

    exit_code = 2

    def __init__(self, what: str, *, expected: str | None = None, fix: str | None = None) -> None:
        parts = [what]
        if expected:
            parts.append(f"expected: {expected}")
        if fix:
            parts.append(f"fix: {fix}")
        super().__init__("\n  ".join(parts))
        self.what, self.expected, self.fix = what, expected, fix


class InputError(PairauditError):
    """The source cannot be read at all (missing file, unknown format, no hub access)."""


class ConfigError(PairauditError):
    """Bad options or config file."""


class MissingDependency(PairauditError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package '{package}', which is not installed",
            fix=f"pip install 'pairaudit[{extra}]'",
        )
        self.package, self.extra = package, extra


class ModelError(PairauditError):
    """A model (tokenizer, embedder, reference) could not be loaded or failed while running."""

    exit_code = 4


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """``" (did you mean 'max_length'?)"`` for a misspelt ``name`` close to one of ``choices``, else ``""``.
    One helper for every place a user names something (options, check names, thresholds, config keys)."""
    import difflib

    options = [str(c) for c in choices]
    text = str(name)
    lowered = {c.lower().replace("-", "_"): c for c in options}
    key = text.lower().replace("-", "_").lstrip("_")
    if key in lowered and lowered[key] != text:
        return f" (did you mean {lowered[key]!r}?)"
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=0.75)
    return f" (did you mean {lowered[close[0]]!r}?)" if close else ""


def require(module: str, extra: str, purpose: str):  # noqa: ANN201 - returns a module
    """Import ``module`` lazily or raise a one-line MissingDependency naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependency(module.split(".")[0], extra, purpose) from exc
