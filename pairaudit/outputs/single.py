"""Single outputs of a committed output folder: ``report.html`` re-rendered in place (``pairaudit report``),
and files added by later commands (``trace.json``, ``trace-drop.jsonl``) under the same rules as a scan's
outputs (:class:`~pairaudit.outputs.folder.OutputDir`): nothing pairaudit did not write is replaced, and
the folder changes at once or not at all."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from pairaudit.errors import ConfigError, file_system_error
from pairaudit.outputs.folder import (
    DATASETS_CACHE,
    META,
    OutputDir,
    _foreign,
    file_entry,
    replace_file,
    same_entry,
)


def replace_outputs(out: Path, files: Mapping[str, bytes | None], doing: str = "writing the outputs") -> None:
    """Add, replace (``bytes``) or remove (``None``) single outputs of the folder ``out`` the way a scan
    replaces its outputs: a new generation holding the committed one's files (hard links; copies where
    the disk has none) and these, switched to at once and recorded in the manifest. A name holding
    anything pairaudit did not write, or a committed file changed since, stops it (exit 2, naming it);
    a failed write leaves the folder as it was."""
    out = Path(out)
    od = OutputDir(out, files)
    try:
        if od.generation is not None:
            _link_tree(od.meta / od.generation, od.tmp, skip=set(files))
        for name, data in files.items():
            if data is not None:
                (od.tmp / name).write_bytes(data)
        od.commit()
    except BaseException as exc:
        od.abort()
        if isinstance(exc, OSError):
            raise file_system_error(exc, out, doing) from exc
        raise


def _link_tree(src: Path, dst: Path, skip: set[str]) -> None:
    for root, dirs, names in os.walk(src):
        rel = Path(root).relative_to(src)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".")]
            names = [n for n in names if n not in skip and not n.startswith(".")]
        for d in dirs:
            if (Path(root) / d).is_symlink():
                os.symlink(os.readlink(Path(root) / d), dst / rel / d)
            else:
                (dst / rel / d).mkdir()
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
        for n in names:
            s, t = Path(root) / n, dst / rel / n
            if s.is_symlink():
                os.symlink(os.readlink(s), t)
            elif rel != Path(".") and DATASETS_CACHE.fullmatch(n):
                continue  # datasets' caches stay behind with the old generation
            else:
                try:
                    os.link(s, t)
                except OSError:  # a file system without hard links
                    shutil.copy2(s, t)


def refresh_record(out: Path, name: str) -> None:
    """After pairaudit itself replaced ``name`` in the committed generation (``pairaudit report``), record
    the new file so the next scan knows it as its own, and put back the folder's link to it when the user
    removed the link (``rm OUT/report.html`` then ``pairaudit report OUT``: the page is pairaudit's again)."""
    meta = Path(out) / META
    link = Path(out) / name
    if not os.path.lexists(link) and (meta / "current" / name).is_file():
        os.symlink(f"{META}/current/{name}", link)
    try:
        data = json.loads((meta / "manifest.json").read_text(encoding="utf-8"))
        gen = meta / data["generation"]
        data["files"][name] = file_entry(gen / name)
    except (OSError, ValueError, KeyError, TypeError):
        return  # an older folder without records: nothing to update
    replace_file(meta / "manifest.json", (json.dumps(data, sort_keys=True) + "\n").encode("utf-8"), gen)


def committed_file(out: Path, name: str) -> Path:
    """The file behind output ``name`` in the committed generation, checked to lie inside ``.pairaudit``
    (pairaudit replaces it there); a plain file of the user's at that name is refused."""
    link = Path(out) / name
    behind = False  # whether ``link`` is already the committed file's path (its link was removed)
    if not os.path.lexists(link):
        if not os.path.lexists(Path(out) / META / "current"):
            return link  # not a pairaudit folder (or an empty one): the name is written by rename
        link, behind = Path(out) / META / "current" / name, True  # the user removed the link: re-render behind it
    elif not link.is_symlink() and link.is_file() and not os.path.lexists(Path(out) / META):
        return link  # a plain folder (written by hand, or copied with links followed): replaced by rename
    meta = (Path(out) / META).resolve()
    if not behind and (not link.is_symlink() or os.readlink(link) != f"{META}/current/{name}"):
        raise _foreign(Path(out), name)
    target = link.resolve()
    if not target.is_relative_to(meta) or target.parent.parent != meta or (target.exists() and not target.is_file()):
        raise _foreign(Path(out), f"{name} (it leads outside {META})")
    _unchanged(Path(out), name, target)
    return target


def _unchanged(out: Path, name: str, target: Path) -> None:
    """Refuse to replace a committed output changed since pairaudit wrote it, as a scan refuses (the manifest's
    record of it: inode, size, mtime, content digest)."""
    from pairaudit.schema import rescan_fix

    try:
        data = json.loads((out / META / "manifest.json").read_text(encoding="utf-8"))
        recorded = data["files"][name] if data["generation"] == target.parent.name else None
    except (OSError, ValueError, KeyError, TypeError):
        return  # an older folder without records
    if recorded is not None and target.exists() and not same_entry(file_entry(target), recorded):
        edited = out / name if os.path.lexists(out / name) else target  # the link, or the file behind a removed one
        raise ConfigError(f"--out {out}: {name} changed since pairaudit wrote it (re-rendering would replace it)",
                          fix=f"keep your edit with cp -L {shlex.quote(str(edited))} "
                              f"{shlex.quote(str(out.parent / (out.name + '-' + name)))}; "
                              + rescan_fix(out, name))
