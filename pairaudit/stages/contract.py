"""The checks a stage class passes when it is defined (``Stage.__init_subclass__``), like cleanlab's issue
managers: a bad declaration fails at import with what to declare, never later as a scan that looks clean.

* ``infos``: a non-empty tuple of ``CheckInfo`` with distinct names;
* ``state``: a non-empty ``{attribute: Kind}`` (``stages.state``), and every attribute that ``observe`` (or a
  method or property of the class it uses) assigns or changes in place is declared there or in ``local``;
* ``distribute``: one of ``DISTRIBUTE``, with what that mode needs (a row-aligned state and a ``partition_key``
  for ``"hash"``, ``summary`` / ``merge_summaries`` for ``"summary"``, ``fit`` / ``apply`` for ``"sample"``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

#: how the Ray engine spreads a stage's finalize over the cluster (``Stage.distribute``)
DISTRIBUTE = (None, "hash", "summary", "cells", "sample")
#: methods that change a container in place: ``self.x.append(...)`` writes ``x``
MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear",
                      "remove", "discard", "sort", "reverse", "__setitem__", "__iadd__"})
#: attributes every stage gets from the base class's ``__init__`` (the run's context, its enabled checks)
BASE_ATTRS = frozenset({"ctx", "enabled"})


class StageDeclarationError(TypeError):
    """A stage class whose declaration the engines cannot run correctly."""


def check_stage_class(cls: type, base: type) -> None:
    """Raise ``StageDeclarationError`` when ``cls`` (a ``Stage`` subclass) is declared wrongly."""
    from pairaudit.checks.base import CheckInfo
    from pairaudit.stages.state import Kind

    name = cls.__name__
    infos = getattr(cls, "infos", None)
    if not isinstance(infos, tuple) or not infos or not all(isinstance(i, CheckInfo) for i in infos):
        raise StageDeclarationError(f"stage {name}: `infos` must be a non-empty tuple of CheckInfo (found {infos!r})")
    names = [i.name for i in infos]
    if len(set(names)) != len(names):
        raise StageDeclarationError(f"stage {name}: `infos` names a check twice: {names}")
    state = getattr(cls, "state", None)
    if not isinstance(state, dict) or not state or not all(
            isinstance(k, str) and isinstance(v, Kind) for k, v in state.items()):
        raise StageDeclarationError(
            f"stage {name}: `state` must declare what observe keeps, as {{attribute: kind}} with kinds from "
            f"pairaudit.stages.state (found {state!r}); e.g. state = {{'_rows': Column(np.int64)}}")
    overlap = set(state) & set(cls.local)
    if overlap:
        raise StageDeclarationError(f"stage {name}: {sorted(overlap)} declared both in `state` and in `local`")
    _check_distribute(cls, base, state)
    undeclared = sorted(observed_writes(cls, base) - set(state) - set(cls.local) - BASE_ATTRS)
    if undeclared:
        example = ", ".join(f"{a!r}: Count()" if not a.startswith("_") else f"{a!r}: Column(np.int64)"
                            for a in undeclared[:2])
        raise StageDeclarationError(
            f"stage {name}: observe changes {', '.join('self.' + a for a in undeclared)}, not declared in `state`: "
            "under the worker pool and Ray, observe runs in other processes and only declared state comes back. "
            f"Declare it with its kind, e.g. state = {{..., {example}}} (Column: per-row arrays, Count: numbers "
            "that add up, Items / Tally: lists and counters), or in `local` if it is a per-process cache or model")


def _check_distribute(cls: type, base: type, state: dict[str, Any]) -> None:
    name, mode = cls.__name__, cls.distribute
    if mode not in DISTRIBUTE:
        raise StageDeclarationError(f"stage {name}: distribute={mode!r} is not one of {DISTRIBUTE}")
    if mode == "hash":
        if cls.partition_key not in state:
            raise StageDeclarationError(f"stage {name}: distribute='hash' needs a partition_key among its state "
                                        f"{sorted(state)} (found {cls.partition_key!r})")
        loose = sorted(k for k, v in state.items() if not v.row_aligned)
        if loose:
            raise StageDeclarationError(f"stage {name}: distribute='hash' cuts the state by rows, but {loose} "
                                        "are not per-row columns; use distribute=None (finalized in one place)")
    needs = {"summary": ("summary", "merge_summaries"), "sample": ("fit", "apply")}.get(mode or "", ())
    missing = [m for m in needs if getattr(cls, m, None) is getattr(base, m, None)]
    if missing:
        raise StageDeclarationError(f"stage {name}: distribute={mode!r} needs the methods {missing}")


def observed_writes(cls: type, base: type | None = None) -> set[str]:
    """Attributes of ``self`` that ``observe`` and the methods / properties of ``cls`` it uses assign or change
    in place (``self.x = ...``, ``self.x += ...``, ``self.x[k] = ...``, ``self.x.append(...)``); methods
    ``cls`` inherits unchanged from ``base`` are the base class's business."""
    seen: set[str] = set()
    writes: set[str] = set()
    todo = ["observe"]
    while todo:
        meth = todo.pop()
        if meth in seen:
            continue
        seen.add(meth)
        tree = None if base is not None and _same(cls, base, meth) else _method_ast(cls, meth)
        if tree is None:
            continue
        w, used = _writes_and_uses(tree)
        writes |= w
        todo += [u for u in used if _is_own_code(cls, u)]
    return writes


def _same(cls: type, base: type, name: str) -> bool:
    return inspect.getattr_static(cls, name, None) is inspect.getattr_static(base, name, object())


def _is_own_code(cls: type, name: str) -> bool:
    obj = inspect.getattr_static(cls, name, None)
    return inspect.isfunction(obj) or isinstance(obj, (property, staticmethod, classmethod))


def _method_ast(cls: type, name: str) -> ast.AST | None:
    obj = inspect.getattr_static(cls, name, None)
    if isinstance(obj, property):
        obj = obj.fget
    elif isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if not inspect.isfunction(obj):
        return None
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):  # no source (defined in a REPL): the runtime check covers it
        return None


def _root(node: ast.AST) -> str | None:
    """``x`` for ``self.x``, ``self.x[k]``, ``self.x.y``, ``self.x.get(k)`` ..."""
    while True:
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return node.attr
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        out: list[ast.AST] = []
        for t in node.targets:
            out += list(t.elts) if isinstance(t, (ast.Tuple, ast.List)) else [t]
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def _writes_and_uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    writes: set[str] = set()
    uses: set[str] = set()
    for node in ast.walk(tree):
        for t in _targets(node):
            root = _root(t)
            if root is not None:
                writes.add(root)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MUTATORS:
                root = _root(node.func.value)
                if root is not None:
                    writes.add(root)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            uses.add(node.attr)
    return writes, uses
