"""Read ``training_args.bin`` without running code from it.

transformers writes the run's ``TrainingArguments`` (TRL: ``DPOConfig``, ``SFTConfig``...) with ``torch.save``:
a zip archive whose ``*/data.pkl`` is a pickle of the arguments object, its enums (``IntervalStrategy``,
``SchedulerType``, ...), an ``AcceleratorConfig``, accelerate's ``PartialState`` and a ``torch.device``.

:func:`read_args` unpickles that with an unpickler whose ``find_class`` never hands out a real callable:

- a class of ``transformers`` / ``trl`` / ``accelerate`` that is a dataclass (or accelerate's ``PartialState``)
  becomes a plain attribute holder (its ``__new__`` / ``__init__`` / ``__setstate__`` are never called);
- an ``enum.Enum`` subclass of those packages becomes a function that returns the value it is called with;
- ``torch.device`` becomes ``str``; ``set`` / ``frozenset`` / ``OrderedDict`` are themselves;
- every other global (``os.system``, ``builtins.eval``, a user's own class, ...) is refused, and so is any
  persistent id (tensor storage), before anything is called.

The top object must be a subclass of ``transformers.TrainingArguments``. The result is a plain dict of the
arguments (nested holders as dicts, enums as their values). ``--trust-pickle`` remains for anything else.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import importlib
import io
import pickle
import zipfile
from pathlib import Path
from typing import Any

PACKAGES = ("transformers", "trl", "accelerate")
_PLAIN = {("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
          ("collections", "OrderedDict"): collections.OrderedDict}


class Refused(pickle.UnpicklingError):
    """The pickle holds something other than argument classes, enums and plain values. ``trust_helps``: whether
    ``--trust-pickle`` could read arguments from it (False: the safe reader saw all it holds, or it is no
    torch.save file at all)."""

    def __init__(self, message: str, trust_helps: bool = True) -> None:
        super().__init__(message)
        self.trust_helps = trust_helps


class NotArguments(Refused):
    """Read in full, safely, and not arguments: ``--trust-pickle`` would read the same thing."""


class _Holder:
    """Stands in for an allowed class: records the state pickle gives it, runs nothing of the class."""

    _module = ""
    _name = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_fields"] = dict(kwargs)
        if args:
            self.__dict__["_fields"]["_args"] = list(args)

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict state, slots state)
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise Refused(f"{self._module}.{self._name} has a state of type {type(state).__name__}, not a dict")
        self.__dict__.setdefault("_fields", {}).update(state)


def _holder_class(module: str, name: str) -> type:
    return type(name, (_Holder,), {"_module": module, "_name": name})


def _enum_value(module: str, name: str, members: set[Any]) -> Any:
    def build(value: Any = None, *rest: Any) -> Any:
        if rest or value not in members:
            raise Refused(f"{module}.{name}({value!r}) is not one of its members")
        return value

    return build


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        where = f"{module}.{name}"
        if (module, name) in _PLAIN:
            return _PLAIN[(module, name)]
        if (module, name) == ("torch", "device"):
            return _device
        if module.split(".", 1)[0] not in PACKAGES or "." in name:
            raise Refused(f"refused {where}: only transformers / TRL / accelerate argument classes, their enums "
                          "and plain values are read")
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise Refused(f"refused {where}: not found in the installed {module.split('.')[0]} ({exc})") from exc
        if isinstance(obj, type) and issubclass(obj, enum.Enum):
            return _enum_value(module, name, {m.value for m in obj})
        if isinstance(obj, type) and (dataclasses.is_dataclass(obj) or where == "accelerate.state.PartialState"):
            return _holder_class(module, name)
        raise Refused(f"refused {where}: not an argument class or enum")

    def persistent_load(self, pid: Any) -> Any:
        raise Refused("refused a tensor storage: training_args.bin should hold no tensors")


def _device(kind: Any = "cpu", index: Any = None) -> str:
    if not isinstance(kind, str) or (index is not None and not isinstance(index, int)):
        raise Refused("refused torch.device with arguments that are not a name and an index")
    return kind if index is None else f"{kind}:{index}"


def _plain(obj: Any) -> Any:
    if isinstance(obj, _Holder):
        return {k: _plain(v) for k, v in obj.__dict__.get("_fields", {}).items()}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_plain(v) for v in obj]
    return obj


# how a legacy (non-zip) torch.save file starts: the pickled magic number 0x1950a86a20f9469cfc6c
_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"


def _pickle_bytes(path: Path) -> bytes:
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
            if len(names) != 1:
                raise Refused(f"{path} is a zip archive without one data.pkl (found {len(names)})")
            return zf.read(names[0])
    except zipfile.BadZipFile as exc:
        with path.open("rb") as f:
            legacy = f.read(len(_LEGACY_MAGIC)) == _LEGACY_MAGIC
        raise Refused(f"{path} is not a torch.save zip archive" + (
            " (the legacy format is not read without --trust-pickle)" if legacy else
            " nor a legacy torch.save file"), trust_helps=legacy) from exc


def names_arguments(d: dict[Any, Any]) -> bool:
    """Whether a dict has any ``TrainingArguments`` field among its keys (a dict of run arguments)."""
    from transformers import TrainingArguments

    return bool({f.name for f in dataclasses.fields(TrainingArguments)} & {str(k) for k in d})


def read_args(path: str | Path) -> dict[str, Any]:
    """The arguments in ``training_args.bin`` as a plain dict; :class:`Refused` for anything else."""
    path = Path(path)
    try:
        data = _pickle_bytes(path)
    except OSError as exc:
        raise Refused(f"cannot read {path}: {exc}") from exc
    try:
        obj = _Unpickler(io.BytesIO(data)).load()
    except Refused:
        raise
    except Exception as exc:
        raise Refused(f"{path} is not a readable pickle: {type(exc).__name__}: {exc}") from exc
    if isinstance(obj, dict) and not names_arguments(obj):  # plain data, read in full
        raise NotArguments(f"{path} holds a dict without any TrainingArguments field (keys: "
                           f"{sorted(str(k) for k in obj)[:8]})")
    if not isinstance(obj, _Holder):
        raise Refused(f"{path} holds a {type(obj).__name__}, not TrainingArguments", trust_helps=isinstance(obj, dict))
    from transformers import TrainingArguments

    cls = getattr(importlib.import_module(obj._module), obj._name)
    if not (isinstance(cls, type) and issubclass(cls, TrainingArguments)):
        raise Refused(f"{path} holds {obj._module}.{obj._name}, not a TrainingArguments subclass")
    out = _plain(obj)
    out["_class"] = f"{obj._module}.{obj._name}"
    return out
