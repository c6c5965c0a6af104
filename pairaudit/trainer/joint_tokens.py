"""Joint tokenization (TRL >= 0.29) with each text tokenized once.

TRL >= 0.29 tokenizes the prompt, prompt + chosen and prompt + rejected: the prompt three times, which
for multi-turn data is most of the text. For a byte-level BPE tokenizer (GPT-2's pre-tokenization regex,
no normalizer, no prefix space, no dropout, added tokens without strip flags, a post-processor that adds
nothing after the text) the ids of ``prompt + completion`` are the prompt's ids followed by the
completion's whenever the pre-tokenizer splits the joint text where the prompt ends: BPE never merges
across pre-tokens. :class:`JointSplitter` says when that split is certain (the prompt ends with ASCII
punctuation other than an apostrophe, the completion starts with an ASCII space, letter or digit, and no
added token spans the junction: a punctuation run stops at a space, letter or digit, and the regex has no
look-behind), e.g. HH's ``"...\\n\\nAssistant:"`` + ``" answer"``. Other rows, and other tokenizers, are
tokenized jointly as before; ``tests/test_joint_tokens.py`` compares both paths.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any

from pairaudit.trainer import long_text
from pairaudit.trainer.memo import TextMemo
from pairaudit.trainer.profiles import common_prefix_length

_END = frozenset(string.punctuation) - {"'"}
_START = frozenset(string.ascii_letters + string.digits + " \t\n\r\x0b\x0c")
# greedy: ends after the last ASCII punctuation (not an apostrophe) followed by an ASCII space, letter or digit
_LAST_SAFE = re.compile("(?s).*[" + re.escape("".join(sorted(_END))) + "](?=[A-Za-z0-9 \t\n\r\x0b\x0c])")
ENABLED = True  # False: joint texts are always tokenized whole (the previous behaviour; tests compare both)
SEARCH_CHARS = 4096  # how far back from the prompt's end a split point is looked for


def _pre_tokenizer_ok(pre: dict[str, Any] | None) -> bool:
    if not pre:
        return False
    if pre.get("type") == "ByteLevel":
        return bool(pre.get("use_regex", True)) and not pre.get("add_prefix_space", True)
    if pre.get("type") == "Sequence":  # e.g. Digits(individual) then ByteLevel: digits only add splits
        parts = pre.get("pretokenizers") or []
        return (sum(p.get("type") == "ByteLevel" for p in parts) == 1
                and all(p.get("type") in ("ByteLevel", "Digits") for p in parts)
                and all(_pre_tokenizer_ok(p) for p in parts if p.get("type") == "ByteLevel"))
    return False


IDS_MEMO = 8_192
"""Texts whose ids a splitter remembers (:class:`~pairaudit.trainer.memo.TextMemo`)."""


class JointSplitter:
    """Decides per (prompt, completion) whether ``ids(prompt + completion) == ids(prompt) + ids(completion)``
    for one tokenizer; ``prefix``: the ids its post-processor puts before a text (e.g. BOS)."""

    def __init__(self, backend: Any, prefix: list[int], added: list[str]) -> None:
        self.backend = backend
        self.prefix = prefix
        self.added = added
        self._heads = {t[:k] for t in added for k in range(1, len(t))}  # proper prefixes of added tokens
        self._longest = max((len(t) for t in added), default=0)
        self._ends = {h[-1] for h in self._heads}  # a head's last character
        # ids of a text seen before (a prompt head or response repeated across pairs): ~5 KB a response
        # as Python ints, so at most IDS_MEMO texts (~40 MB) per worker
        self.memo: TextMemo[Any] = TextMemo(IDS_MEMO)

    def _encode(self, texts: list[str]) -> list[Any]:
        return long_text.encode(self.backend, texts, False, self)  # long texts: in pieces, same ids

    @classmethod
    def for_backend(cls, backend: Any) -> JointSplitter | None:
        """A splitter for a ``tokenizers.Tokenizer``, or None when its pipeline is not covered."""
        try:
            spec = json.loads(backend.to_str())
        except Exception:  # noqa: BLE001 - not a tokenizers backend
            return None
        model = spec.get("model") or {}
        if spec.get("normalizer") is not None or not _pre_tokenizer_ok(spec.get("pre_tokenizer")):
            return None
        if model.get("type") != "BPE" or model.get("dropout") not in (None, 0, 0.0):
            return None
        added = spec.get("added_tokens") or []
        if any(t.get("lstrip") or t.get("rstrip") or t.get("single_word") for t in added):
            return None
        probe = "Hello world: 12 ab"
        raw = backend.encode(probe, add_special_tokens=False).ids
        full = backend.encode(probe, add_special_tokens=True).ids
        if len(full) < len(raw) or full[len(full) - len(raw):] != raw:  # something after the text
            return None
        return cls(backend, full[: len(full) - len(raw)], [t["content"] for t in added if t.get("content")])

    def _spans(self, head: str, tail: str) -> bool:
        """An added token starts in ``head`` and ends in ``tail``."""
        if not head or head[-1] not in self._ends:
            return False
        for k in range(1, min(len(head), self._longest - 1) + 1):
            h = head[-k:]
            if h in self._heads and any(t.startswith(h) and tail.startswith(t[k:]) for t in self.added):
                return True
        return False

    def split_point(self, prompt: str, completions: tuple[str, ...]) -> int:
        """The last position ``j`` of ``prompt`` where every text ``prompt + completion`` (and the prompt
        itself) certainly splits into pre-tokens: ``ids(prompt[:j] + rest) == ids(prompt[:j]) + ids(rest)``.
        0 when there is none (then the texts are tokenized whole)."""
        if not prompt:
            return 0
        if prompt[-1] in _END and all(not c or (c[0] in _START and not self._spans(prompt, c)) for c in completions):
            return len(prompt)
        lo = max(0, len(prompt) - SEARCH_CHARS)
        m = _LAST_SAFE.match(prompt, lo)
        while m is not None and m.end() > lo:
            j = m.end()
            tail = prompt[j:]
            if not self._spans(prompt[:j], tail) and not any(self._spans(prompt[:j], tail + c) for c in completions):
                return j
            m = _LAST_SAFE.match(prompt, lo, j - 1)
        return 0

    def encode(self, heads: list[str], tails: list[tuple[str, str, str]], special: bool
               ) -> tuple[list[list[int]], list[list[list[int]]]]:
        """Ids of each head (once per distinct head, with the post-processor's prefix when ``special``)
        and of each tail text (without it)."""
        distinct = list(dict.fromkeys(heads))
        flat = [t for ts in tails for t in ts]
        enc = self.memo.get_many(distinct + flat, self._encode, long_text.LONG_CHARS)
        prefix = self.prefix if special else []
        ids = {h: prefix + e for h, e in zip(distinct, enc)}
        rest = iter(enc[len(distinct):])
        return [ids[h] for h in heads], [[next(rest) for _ in ts] for ts in tails]


def encode_parts(sp: JointSplitter, rendered: list[Any], ids: list[list[int]], common_prefix: bool
                 ) -> dict[int, int]:
    """Fill ``ids[3i:3i+3]`` with the (prompt, chosen, rejected) ids of joint rows ``i``, tokenizing the
    prompt up to its :meth:`JointSplitter.split_point` once and only the short rest with each completion;
    the prompt/completion cut as in ``DPOTokenizer.encode_rendered``. Returns the rows done (the others are
    left to the whole-text encode), each with the number of the prompt's own tokens the cut left out
    (``EncodedPair.prompt_left_out``)."""
    done: dict[int, int] = {}
    for special in (False, True):
        idx, heads, tails = [], [], []
        for i, rd in enumerate(rendered):
            if not getattr(rd, "joint", False) or bool(getattr(rd, "special", False)) is not special:
                continue
            p, fc, fr = rd
            if not (fc.startswith(p) and fr.startswith(p)):
                continue
            j = sp.split_point(p, (fc[len(p):], fr[len(p):]))
            if j == 0:
                continue
            idx.append(i)
            heads.append(p[:j])
            tails.append((p[j:], fc[j:], fr[j:]))
        if not idx:
            continue
        h_ids, t_ids = sp.encode(heads, tails, special)
        for i, h, (tp, tc, tr) in zip(idx, h_ids, t_ids):
            cut = min(common_prefix_length(tp, tc), common_prefix_length(tp, tr)) if common_prefix else len(tp)
            ids[3 * i: 3 * i + 3] = [h + tp[:cut] if cut else h, tc[cut:], tr[cut:]]
            done[i] = len(tp) - cut
    return done
