"""Trainer profiles: how the user's trainer tokenizes, truncates and filters preference pairs.

A profile covers a range of TRL versions whose ``DPOTrainer`` preprocessing is the same. Every fact
below was read from TRL's source (wheels of each version) and the newest profile is pinned against the
installed TRL by ``tests/test_trl_differential.py``:

- TRL < 0.29 (``DPOConfig`` has ``max_prompt_length`` 512, ``max_completion_length``, ``truncation_mode``
  default ``keep_end``): prompt, chosen and rejected are tokenized separately without special tokens
  (conversational ones rendered to text by ``maybe_apply_chat_template`` first), EOS appended to the
  completions (before 0.27.2 also to conversational ones), the prompt cut to its last
  ``max_prompt_length`` tokens, completions to their first ``max_completion_length``, then
  prompt + completion to ``max_length`` (``keep_end``: its last tokens, ``keep_start``: its first).
- TRL >= 0.29 (no prompt / completion limits, ``truncation_mode`` default ``keep_start``, ``keep_end``
  deprecated from 1.5): the prompt and prompt + completion (EOS text appended unless already there;
  conversational: the chat template, no EOS added) are tokenized whole, with the tokenizer's special
  tokens; the completion is what follows the prompt's ids (from 1.14.2: what follows the common prefix
  of the two); prompt + completion are cut to ``max_length`` by ``truncation_mode``. From 1.9 the
  trainer drops every row whose prompt alone has ``>= max_length`` tokens (``keep_start`` only).
- Without a ``prompt`` column every version first runs TRL's ``extract_prompt`` (character-wise or
  message-wise common prefix, see :func:`trl_extract_prompt`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pairaudit.config import TRUNCATION_MODES
from pairaudit.errors import ConfigError

if TYPE_CHECKING:
    from pairaudit.config import ScanConfig

AUTO = "auto"  # a limit or mode left to the trainer profile's default
NO_LIMIT = "none"  # how a user writes "no limit" (None in Python)


@dataclass(frozen=True)
class TrainerProfile:
    """One trainer's preprocessing semantics and its DPOConfig defaults."""

    name: str  # CLI value: "trl-" + the first TRL version it covers, e.g. "trl-1.14.2"
    versions: str  # the TRL versions it covers (PEP 440 specifier)
    max_length: int | None
    max_prompt_length: int | None
    max_completion_length: int | None
    truncation_mode: str
    prompt_limits: bool  # DPOConfig has max_prompt_length / max_completion_length
    joint: bool  # prompt and prompt+completion tokenized as whole texts with special tokens (TRL >= 0.29)
    common_prefix: bool  # completion starts where prompt and prompt+completion ids diverge (TRL >= 1.14.2)
    chat_eos: bool  # EOS id appended to conversational completions too (TRL < 0.27.2)
    drops_full_prompts: bool  # keep_start: rows whose prompt has >= max_length tokens are dropped (TRL >= 1.9)
    deprecated_modes: tuple[str, ...] = ()
    pairaudit_legacy: bool = False  # pairaudit 0.1: its own implicit-prompt split, generation prompt after any role

    @property
    def title(self) -> str:
        return f"TRL {self.versions} DPOTrainer"

    def contains(self, version: str) -> bool:
        return all(_cmp(version, op, bound) for op, bound in _spec(self.versions))


PROFILES: tuple[TrainerProfile, ...] = (
    TrainerProfile("trl-1.14.2", ">=1.14.2", 1024, None, None, "keep_start", prompt_limits=False, joint=True,
                   common_prefix=True, chat_eos=False, drops_full_prompts=True, deprecated_modes=("keep_end",)),
    TrainerProfile("trl-1.9", ">=1.9.0,<1.14.2", 1024, None, None, "keep_start", prompt_limits=False, joint=True,
                   common_prefix=False, chat_eos=False, drops_full_prompts=True, deprecated_modes=("keep_end",)),
    TrainerProfile("trl-0.29", ">=0.29.0,<1.9.0", 1024, None, None, "keep_start", prompt_limits=False, joint=True,
                   common_prefix=False, chat_eos=False, drops_full_prompts=False),
    TrainerProfile("trl-0.27.2", ">=0.27.2,<0.29.0", 1024, 512, None, "keep_end", prompt_limits=True, joint=False,
                   common_prefix=False, chat_eos=False, drops_full_prompts=False),
    TrainerProfile("trl-0.20", ">=0.20.0,<0.27.2", 1024, 512, None, "keep_end", prompt_limits=True, joint=False,
                   common_prefix=False, chat_eos=True, drops_full_prompts=False),
)
BY_NAME = {p.name: p for p in PROFILES}
ALIASES = {"trl-latest": PROFILES[0].name, "trl-legacy": "trl-0.27.2"}
#: what DPOTokenizer built from keywords alone reproduces: pairaudit's tokenization before profiles
#: existed (TRL 0.20-0.27 rules, with pairaudit's own implicit-prompt split); not selectable by name
KEYWORD_PROFILE = dataclasses.replace(BY_NAME["trl-0.20"], name="pairaudit-0.1", pairaudit_legacy=True)


def _version_key(v: str) -> tuple[int, ...]:
    """(major, minor, patch), missing parts 0: "1.9" is 1.9.0 (a shorter tuple compared as smaller)."""
    key = [int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3]]
    return tuple(key + [0] * (3 - len(key)))


def _spec(spec: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"(>=|<=|==|<|>)\s*([0-9][0-9.]*)", spec)]


def _cmp(version: str, op: str, bound: str) -> bool:
    a, b = _version_key(version), _version_key(bound)
    return {">=": a >= b, "<=": a <= b, "==": a == b, "<": a < b, ">": a > b}[op]


def installed_trl() -> str | None:
    """Version of the installed TRL (read from its metadata; trl itself is never imported here)."""
    from pairaudit.versions import package_versions

    return package_versions(("trl",)).get("trl")


def profile_for_version(version: str) -> TrainerProfile:
    if not re.fullmatch(r"\d+(\.\d+){0,2}([.+-]?\w+)*", version.strip()):
        raise ConfigError(f"--trainer trl=={version}: {version!r} is not a version number",
                          expected="e.g. --trainer trl==1.16.0, or a profile name (see --help)")
    for p in PROFILES:
        if p.contains(version):
            return p
    if _version_key(version) > _version_key("1.14.2"):
        return PROFILES[0]
    names = ", ".join(p.name for p in PROFILES)
    raise ConfigError(f"TRL {version} is older than every profile pairaudit models (oldest: TRL >=0.20.0)",
                      fix=f"pick the nearest profile by name with --trainer ({names}) and check its semantics")


def pick_profile(requested: str | None) -> tuple[TrainerProfile, str, str | None]:
    """(profile, how it was chosen, installed TRL version) for a ``--trainer`` value."""
    raw = (requested or "trl").strip()
    name = raw.lower()
    installed = installed_trl()
    if name == "trl":
        if installed is None:
            return PROFILES[0], "newest known TRL (TRL is not installed here)", None
        prof = profile_for_version(installed)
        how = f"installed TRL {installed}"
        if _version_key(installed) > _version_key("1.16.0"):
            how += " (newer than the newest TRL checked, 1.16.0: assuming it still behaves like it)"
        return prof, how, installed
    m = re.fullmatch(r"trl\s*==\s*(\S+)", name)
    if m:
        return profile_for_version(m.group(1)), f"named version TRL {m.group(1)}", installed
    name = ALIASES.get(name, name)
    if name in BY_NAME:
        return BY_NAME[name], "named profile", installed
    raise ConfigError(f"--trainer {raw!r} is not a known trainer",
                      expected="trl (the installed TRL), trl==VERSION, or a profile: "
                               + ", ".join([p.name for p in PROFILES] + sorted(ALIASES)),
                      fix="e.g. --trainer trl==0.28.0 for the old DPOConfig with max_prompt_length")


def parse_limit(value: Any, option: str, *, auto_ok: bool = True) -> int | None | str:
    """A length limit from the CLI, a config file or Python: a positive int, ``None`` / ``"none"`` (no
    limit) or ``"auto"`` (the trainer profile's default)."""
    if value is None:
        return None
    if isinstance(value, str):
        s = value.strip().lower()
        if s in (NO_LIMIT, "null", "no"):
            return None
        if s == AUTO and auto_ok:
            return AUTO
        if re.fullmatch(r"[+]?\d+", s):
            value = int(s)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{option} {value!r} is not a length",
                          expected="a positive number of tokens, 'none' (no limit) or 'auto' (the trainer's default)",
                          fix=f"e.g. {option} 2048 or {option} none")
    if value <= 0:
        raise ConfigError(f"{option} {value} would cut every sequence to nothing",
                          expected="a positive number of tokens, or 'none' for no limit",
                          fix=f"e.g. {option} 2048, or {option} none")
    return value


@dataclass(frozen=True)
class TrainerSettings:
    """A profile with the limits of this run (explicit values win over the profile's defaults)."""

    profile: TrainerProfile
    max_length: int | None
    max_prompt_length: int | None
    max_completion_length: int | None
    truncation_mode: str
    requested: str = "trl"
    chosen_by: str = "named profile"
    trl_installed: str | None = None
    explicit: tuple[str, ...] = ()  # the settings the user gave (the rest are the profile's defaults)
    notes: tuple[str, ...] = field(default=(), compare=False)

    # -- the trainer's row filter ---------------------------------------------------------------
    def drop_reason(self, prompt_len: int) -> str | None:
        """Why the trainer drops a row whose (trainer-tokenized) prompt has ``prompt_len`` tokens."""
        p = self.profile
        if p.drops_full_prompts and self.truncation_mode == "keep_start" and self.max_length is not None \
                and prompt_len >= self.max_length:
            return (f"prompt alone is {prompt_len} tokens >= max_length {self.max_length}: {p.title} drops the row "
                    "(keep_start would leave no completion token)")
        return None

    def keeps(self, encoded: Any) -> bool:
        """Whether the trainer keeps a row, given its ``EncodedPair`` (or its prompt length as an int)."""
        n = encoded if isinstance(encoded, int) else len(encoded.prompt_ids)
        return self.drop_reason(n) is None

    # -- report ---------------------------------------------------------------------------------
    def filter_text(self) -> str | None:
        if self.drop_reason(10**12) is None:
            return None
        return f"rows whose prompt alone has >= {self.max_length} tokens are dropped by the trainer"

    def to_json(self) -> dict[str, Any]:
        p = self.profile
        return {
            "requested": self.requested, "profile": p.name, "trainer": p.title, "trl_versions": p.versions,
            "chosen_by": self.chosen_by, "trl_installed": self.trl_installed,
            "max_length": self.max_length, "max_prompt_length": self.max_prompt_length,
            "max_completion_length": self.max_completion_length, "truncation_mode": self.truncation_mode,
            "from_profile_defaults": sorted({"max_length", "max_prompt_length", "max_completion_length",
                                             "truncation_mode"} - set(self.explicit)),
            "row_filter": self.filter_text(),
        }

    def apply(self, cfg: ScanConfig) -> ScanConfig:
        """``cfg`` with the profile name and every limit made concrete (what report.json records, so
        that a rerun from it gives the same semantics wherever it runs)."""
        return dataclasses.replace(cfg, trainer=self.profile.name, max_length=self.max_length,
                                   max_prompt_length=self.max_prompt_length,
                                   max_completion_length=self.max_completion_length,
                                   truncation_mode=self.truncation_mode)


def settings(trainer: str | None = "trl", *, max_length: Any = AUTO, max_prompt_length: Any = AUTO,
             max_completion_length: Any = AUTO, truncation_mode: Any = AUTO,
             profile: TrainerProfile | None = None) -> TrainerSettings:
    """Resolve a trainer name and limits (``"auto"`` = the profile's default) to TrainerSettings.

    Raises ConfigError for nonsense: a limit that is not a positive int / none / auto, an unknown
    mode, or a prompt/completion limit the chosen trainer does not have."""
    if profile is not None:
        prof, how, installed = profile, "named profile", installed_trl()
    else:
        prof, how, installed = pick_profile(trainer)
    explicit = []
    values: dict[str, int | None] = {}
    for name, raw, default in (("max_length", max_length, prof.max_length),
                               ("max_prompt_length", max_prompt_length, prof.max_prompt_length),
                               ("max_completion_length", max_completion_length, prof.max_completion_length)):
        v = parse_limit(raw, "--" + name.replace("_", "-"))
        if v == AUTO:
            values[name] = default
            continue
        explicit.append(name)
        if v is not None and name != "max_length" and not prof.prompt_limits:
            raise ConfigError(
                f"--{name.replace('_', '-')} {v}: {prof.title} has no {name} (DPOConfig dropped it in TRL 0.29)",
                expected=f"only --max-length and --truncation-mode for --trainer {prof.name}",
                fix=f"remove --{name.replace('_', '-')} (or pass 'none'), or choose an older trainer, "
                    "e.g. --trainer trl-legacy (TRL 0.27.2-0.28)")
        values[name] = v  # type: ignore[assignment]
    mode = AUTO if truncation_mode is None else str(truncation_mode).strip().lower()
    if mode == AUTO:
        mode = prof.truncation_mode
    else:
        explicit.append("truncation_mode")
        if mode not in TRUNCATION_MODES:
            raise ConfigError(f"--truncation-mode {truncation_mode!r} is not known",
                              expected="keep_start or keep_end (TRL DPOConfig.truncation_mode)")
    notes = []
    if mode in prof.deprecated_modes:
        notes.append(f"truncation_mode {mode} is deprecated in {prof.title} (it will be removed in TRL 2.0)")
    return TrainerSettings(prof, values["max_length"], values["max_prompt_length"], values["max_completion_length"],
                           mode, requested=(trainer or "trl") if profile is None else profile.name, chosen_by=how,
                           trl_installed=installed, explicit=tuple(explicit), notes=tuple(notes))


def resolve(cfg: ScanConfig) -> TrainerSettings:
    """The trainer settings a scan configuration asks for (see :func:`settings`)."""
    return settings(cfg.trainer, max_length=cfg.max_length, max_prompt_length=cfg.max_prompt_length,
                    max_completion_length=cfg.max_completion_length, truncation_mode=cfg.truncation_mode)


# -- TRL's own preprocessing steps, transcribed ------------------------------------------------------

def trl_extract_prompt(chosen: Any, rejected: Any) -> tuple[Any, Any, Any]:
    """TRL's ``extract_prompt`` (identical from TRL 0.20 to 1.16): the longest common prefix of chosen
    and rejected (characters for strings, messages for lists), one step back when the cut follows a
    space. Off by one when one side is a prefix of the other or both are equal: the last element then
    stays in the completions. Raises ValueError where TRL raises (an empty side)."""
    n = min(len(chosen), len(rejected))
    if n == 0:
        raise ValueError("TRL's extract_prompt fails on an empty chosen or rejected (UnboundLocalError in TRL)")
    idx = 0
    for idx in range(n):
        if chosen[idx] != rejected[idx]:
            if chosen[idx - 1] == " ":  # remove space before the prompt
                idx -= 1
            break
    return chosen[:idx], chosen[idx:], rejected[idx:]


def common_prefix_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items (token ids, characters) ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
