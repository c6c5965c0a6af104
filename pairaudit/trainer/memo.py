"""A bounded memo of a per-text result (token ids, a check's score) that depends on the text alone.

Data with several pairs per prompt repeats each response many times (the shared scale sets: every response
~42 times at 100k rows); a check that scores a response from its text alone can score it once. The memo
lives in one object (a check, the tokenizer's joint splitter), so in one worker process: it spans batches, not processes. It holds at most
``max_texts`` texts; when full it is emptied and refilled (no per-call bookkeeping), so memory stays
bounded at any dataset size and a dataset without repeats pays one dict lookup per text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_TEXTS = 16_384
"""At ~1.6 KB a text at most in the scale sets, 16k texts hold ~26 MB a worker (the texts are the pairs' own
strings while their batch lives; only texts kept past their batch cost memory), within the 1M-row peak's
margin under 3 GB."""


class TextMemo(Generic[T]):
    """``memo.get(text, fn)``: ``fn(text)``, computed once per distinct text while it is remembered."""

    def __init__(self, max_texts: int = MAX_TEXTS) -> None:
        self.max_texts = max_texts
        self._seen: dict[str, T] = {}
        self.hits = 0

    def get(self, text: str, fn: Callable[[str], T], max_chars: int | None = None) -> T:
        """Args: text: the key and argument; fn: a pure function of the text; max_chars: texts this long or
        longer are computed but not remembered (a large text is not held).
        Returns: ``fn(text)``, from the memo when the text was seen."""
        if max_chars is not None and len(text) >= max_chars:
            return fn(text)
        try:
            value = self._seen[text]
        except KeyError:
            pass
        else:
            self.hits += 1
            return value
        value = fn(text)
        if len(self._seen) >= self.max_texts:
            self._seen.clear()
        self._seen[text] = value
        return value

    def get_many(self, texts: list[str], fn_many: Callable[[list[str]], list[T]], max_chars: int) -> list[T]:
        """Args: texts: keys and arguments; fn_many: a pure function of each text, batched
        (``fn_many(ts)[i]`` depends on ``ts[i]`` alone); max_chars: texts this long or longer are computed
        but not remembered (their results can be large). Returns: ``[fn(t) for t in texts]``, computing
        the texts not remembered in one ``fn_many`` call."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if len(self._seen) + len(missing) > self.max_texts:
            self._seen.clear()
            missing = list(dict.fromkeys(texts))
        self.hits += len(texts) - len(missing)
        computed = dict(zip(missing, fn_many(missing))) if missing else {}
        self._seen.update((t, v) for t, v in computed.items() if len(t) < max_chars)
        return [computed[t] if t in computed else self._seen[t] for t in texts]
