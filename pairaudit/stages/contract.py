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
#: the kind to suggest for an undeclared attribute, by how ``observe`` changes it
KIND_HINTS = {"add": "Count()", "append": "Column(np.int64)  # or Items() for values that are not per-row arrays",
              "key": "Tally()", "set": "Count()  # or the kind of what it holds"}
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
    _check_init(cls)
    writes = observed_writes(cls, base)
    undeclared = sorted(set(writes) - set(state) - set(cls.local) - BASE_ATTRS)
    if undeclared:
        example = ", ".join(f"{a!r}: {KIND_HINTS[writes[a]]}" for a in undeclared[:2])
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


def observed_writes(cls: type, base: type | None = None) -> dict[str, str]:
    """Attributes of ``self`` that ``observe`` and the methods / properties of ``cls`` it uses assign or change
    in place (``self.x = ...``, ``self.x += ...``, ``self.x[k] = ...``, ``self.x.append(...)``); methods
    ``cls`` inherits unchanged from ``base`` are the base class's business. Returns attribute -> how it is
    changed: "add" (``+=``), "append" (a list method), "key" (``x[k] = ...``, a dict method), "set" (assigned)."""
    seen: set[str] = set()
    writes: dict[str, str] = {}
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
        writes = {**w, **writes}
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


def _writes_and_uses(tree: ast.AST) -> tuple[dict[str, str], set[str]]:
    writes: dict[str, str] = {}
    uses: set[str] = set()
    for node in ast.walk(tree):
        for t in _targets(node):
            root = _root(t)
            if root is not None:
                how = "add" if isinstance(node, ast.AugAssign) else "key" if isinstance(t, ast.Subscript) else "set"
                writes.setdefault(root, how)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MUTATORS:
                root = _root(node.func.value)
                if root is not None:
                    how = "key" if node.func.attr in ("update", "setdefault", "popitem", "__setitem__") else "append"
                    writes.setdefault(root, how)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            uses.add(node.attr)
    return writes, uses


def _check_init(cls: type) -> None:
    """A stage's own ``__init__`` must call ``super().__init__(ctx, enabled)``: the base class sets the context,
    the enabled checks and the declared state there."""
    obj = inspect.getattr_static(cls, "__init__", None)
    if not inspect.isfunction(obj) or "__init__" not in vars(cls):
        return
    tree = _method_ast(cls, "__init__")
    if tree is None:
        return
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "__init__" and isinstance(n.func.value, ast.Call)
             and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"]
    if not calls:
        raise StageDeclarationError(
            f"stage {cls.__name__}: __init__ does not call super().__init__(ctx, enabled): the base class sets "
            "self.ctx, self.enabled and the declared state there; call it first")
