"""pairaudit's version, and the versions of installed libraries (read from their metadata, never imported)."""

from __future__ import annotations

from collections.abc import Iterable

__version__ = "0.1.0"


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """Name -> installed version, in the order given; a package that is not installed is left out."""
    import importlib.metadata as md

    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            pass
    return out
