"""Where the trainer splits an implicit-prompt pair, next to where its text splits.

For data without a ``prompt`` column TRL runs ``extract_prompt``: the prompt is the longest common
prefix of chosen and rejected (characters for strings, messages for lists), one step back when the cut
follows a space, and off by one when one side is a prefix of the other (its last character stays in
the completions). pairaudit's own reading of such a pair (``io.formats.split_hh``) cuts at the last
``"\\n\\nAssistant:"`` both share. When the two responses open with the same text the trainer's prompt
goes further: it takes that shared opening from both responses ("You're welcome" of "You're welcome!"
and "You're welcome! It was my pleasure!"), and the cut can fall inside a word (" welcom" | "e").

:func:`implicit_split` says what the trainer's prompt took (``shared``), of which kind, and whether the
cut is inside a word; checks (``prefix_pair``, ``split_word``), the length stage and the pair view all
read it from here, so they say the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pairaudit.io.formats import IMPLICIT_FORMATS, common_prefix_chars

_WORDCHAR = re.compile(r"\w")


def trl_extract_prompt_text(chosen: str, rejected: str, shared: int = 0) -> tuple[str, str, str]:
    """TRL's ``extract_prompt`` on two strings, exactly (same result as the transcribed loop in
    ``trainer.profiles.trl_extract_prompt``, without a Python loop over characters). ``shared``: a length both
    strings are known to share at their start (a prompt put before each response): only the rest is compared."""
    n = min(len(chosen), len(rejected))
    if n == 0:
        raise ValueError("TRL's extract_prompt fails on an empty chosen or rejected (UnboundLocalError in TRL)")
    k = shared + common_prefix_chars(chosen[shared:], rejected[shared:]) if shared else common_prefix_chars(chosen, rejected)
    if k < n:
        idx = k - 1 if chosen[k - 1] == " " else k  # k == 0: TRL looks at chosen[-1], so do we
    else:  # no difference in the first n characters: TRL's loop ends at n - 1 (its off-by-one)
        idx = n - 1
    return chosen[:idx], chosen[idx:], rejected[idx:]


@dataclass(frozen=True, slots=True)
class ImplicitSplit:
    """The trainer's split of one implicit-prompt pair, against the text's own split.

    ``prompt`` / ``chosen`` / ``rejected``: what the trainer's dataset holds after ``extract_prompt``
    (strings, or message lists). ``shared``: the part of the responses (as the text reads them) that the
    trainer's prompt took ("" or [] when none). ``kind``: ``""`` (nothing taken), ``"prefix"`` (one
    response is a prefix of the other), ``"identical"`` or ``"opening"`` (both open with the same text).
    ``mid_word``: the trainer's prompt ends inside a word (strings only).
    """

    prompt: Any
    chosen: Any
    rejected: Any
    shared: Any
    kind: str
    mid_word: bool

    @property
    def absorbs(self) -> bool:
        return bool(self.shared)

    def marked(self, width: int = 40) -> str:
        """The end of the trainer's prompt and the start of each completion around a ``|``:
        ``'…You’re welcom|e.' / '…You’re welcom|e'``."""
        if not isinstance(self.prompt, str):
            return ""
        tail = self.prompt[-width:].replace("\n", "\\n")
        lead = "…" if len(self.prompt) > width else ""

        def head(s: str) -> str:
            s = s.replace("\n", "\\n")
            return s[:20] + ("…" if len(s) > 20 else "")

        return f"'{lead}{tail}|{head(self.chosen)}' / '{lead}{tail}|{head(self.rejected)}'"


def _kind(chosen: Any, rejected: Any) -> str:
    if chosen == rejected:
        return "identical"
    if chosen[:len(rejected)] == rejected or rejected[:len(chosen)] == chosen:
        return "prefix"
    return "opening"


MEMO_PAIRS = 2048  # pairs whose split is remembered: a batch's checks and stages ask for each pair's split 3 times

_memo: dict[int, tuple[Any, Any, Any, Any, ImplicitSplit | None]] = {}


def implicit_split(pair: Any) -> ImplicitSplit | None:
    """The trainer's split of an implicit-prompt ``Pair`` (None for other formats, or where TRL's
    ``extract_prompt`` fails: an empty side). ``prefix_pair``, ``split_word`` and the length stage ask for the
    same pair's split: the last ``MEMO_PAIRS`` pairs' are remembered (the pair and its texts held, and checked
    to be the same objects, so a remembered split is never another pair's)."""
    hit = _memo.get(id(pair))
    if hit is not None and hit[0] is pair and hit[1] is pair.prompt and hit[2] is pair.chosen \
            and hit[3] is pair.rejected:
        return hit[4]
    sp = _implicit_split(pair)
    if len(_memo) >= MEMO_PAIRS:
        _memo.clear()
    _memo[id(pair)] = (pair, pair.prompt, pair.chosen, pair.rejected, sp)
    return sp


def _implicit_split(pair: Any) -> ImplicitSplit | None:
    if pair.format not in IMPLICIT_FORMATS or pair.pretokenized:
        return None
    try:
        if pair.conversational:
            pm, cm, rm = pair.prompt_messages or [], pair.chosen_messages or [], pair.rejected_messages or []
            from pairaudit.trainer import profiles

            tp, tc, tr = profiles.trl_extract_prompt(pm + cm, pm + rm)
            shared = tp[len(pm):] if tp[:len(pm)] == pm else []
            return ImplicitSplit(tp, tc, tr, shared, _kind(cm, rm) if shared else "", False)
        p, c, r = pair.prompt or "", pair.chosen or "", pair.rejected or ""
        tp, tc, tr = trl_extract_prompt_text(p + c, p + r, shared=len(p))
    except ValueError:
        return None
    shared = tp[len(p):] if len(tp) > len(p) else ""
    mid = bool(tp) and bool(_WORDCHAR.match(tp[-1])) and any(s[:1] and _WORDCHAR.match(s[0]) for s in (tc, tr))
    return ImplicitSplit(tp, tc, tr, shared, _kind(c, r) if shared else "", mid)
