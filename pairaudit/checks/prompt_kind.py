"""What kind of answer a prompt asks for: the cues of a short-answer prompt (a label, a choice, a number).

``length_outlier`` and ``near_identical_pair`` judge a response within its prompt's kind: a one-word answer
to "Classify the review ... [EX A]:" is no truncation, and "positive" vs "negative" is the whole answer.
Three kinds of cue, each a regular expression over the prompt (its first and last ``_WINDOW`` characters):

* an answer slot at its end: the last line ends with ``Output:``, ``A:``, ``Answer:``, ``Solution:``,
  ``Student:``, ``Label:``, ``[EX A]:`` ... (few-shot task templates; ``Response:`` is left out: open
  instruction templates end with it);
* a closed set of answers: classify / label ... as, yes or no, true or false, ``Options:`` / ``Choices:``,
  answer with one word, output either ..., reply with ..., verify the correctness, decide if / whether,
  pick / choose one ... from, a category, which of the following (PandaLM's task prompts);
* a number asked for: calculate, compute, evaluate, how many, solve for, final answer, what is 3 ...

Dialogues are judged by their last user turn only (a "how many" three turns back asks nothing now).

On the 1,000 UltraFeedback rows every response of one token answers a prompt with one of these cues.
"""

from __future__ import annotations

import re

from pairaudit.datatypes import Pair
from pairaudit.trainer.long_text import LONG_CHARS
from pairaudit.trainer.memo import TextMemo

_WINDOW = 4000
_SLOT = re.compile(r"(?:\b(?:output|answer|a|ans|solution|student|label|sentiment|category|classification|result)"
                   r"|\[ex a\])\s*:\s*$", re.IGNORECASE)
_CLOSED = re.compile(
    r"\b(?:classify|categori[sz]e|label (?:the|each|it|this|them)\b|yes or no|[\"'“]yes[\"'”] (?:or|and) [\"'“]no"
    r"|true or false|options\s*:|choices\s*:|one[- ]word|single word|answer (?:with|in) (?:one|a single|only)"
    r"|output (?:either|only|one of|the word)|(?:reply|respond|say) (?:with|only|ready)\b"
    r"|verify (?:the correctness|whether|if)|decide (?:if|whether|which)|(?:pick|choose|select) (?:a|one|the)\b"
    r"[^.\n]{0,40}\bfrom\b|\ba category\b|which (?:one|of the following)\b)", re.IGNORECASE)
_NUMBER = re.compile(r"\b(?:calculate|compute|evaluate|how many|final answer|solve (?:for|the equation)"
                     r"|what is\s*[-(\d])", re.IGNORECASE)
_HH_HUMAN = "\n\nHuman:"


def pair_short_answer_cue(pair: Pair) -> str:
    """:func:`short_answer_cue` of the pair's last user turn (dialogues) or its prompt.

    Args:
        pair: a normalised pair.

    Returns:
        A few words naming the cue, or "".
    """
    if pair.prompt_messages:
        users = [m.get("content") for m in pair.prompt_messages if m.get("role") == "user"]
        text = users[-1] if users and isinstance(users[-1], str) else pair.prompt
    elif pair.format == "implicit_hh" and pair.prompt:
        text = pair.prompt[pair.prompt.rfind(_HH_HUMAN) + 1:]
    else:
        text = pair.prompt
    return short_answer_cue(text)


def text_short_answer_cue(prompt: str) -> str:
    """:func:`short_answer_cue` of a prompt known only as text (the near-duplicate stage keeps texts, not
    pairs): an HH dialogue is judged by its last "Human:" turn, any other text whole.

    Args:
        prompt: the prompt's text.

    Returns:
        A few words naming the cue, or "".
    """
    at = prompt.rfind(_HH_HUMAN)
    return short_answer_cue(prompt[at + 1:] if at >= 0 else prompt)


_CUES: TextMemo[str] = TextMemo(4096)  # a prompt shared by several pairs is read once (per process)


def short_answer_cue(prompt: str | None) -> str:
    """The cue by which ``prompt`` asks for a short answer ("answer slot 'Output:'", "closed answers
    'classify'", "a number 'how many'"), or "" when it shows none.

    Args:
        prompt: the prompt's text (for dialogues, the text of its turns).

    Returns:
        A few words naming the cue, or "".
    """
    if not prompt:
        return ""
    return _CUES.get(prompt, _cue, LONG_CHARS)


def _cue(prompt: str) -> str:
    text = prompt if len(prompt) <= 2 * _WINDOW else prompt[:_WINDOW] + "\n" + prompt[-_WINDOW:]
    last = text.rstrip().rsplit("\n", 1)[-1]
    m = _SLOT.search(last)
    if m:
        return f"an answer slot {m.group().strip()!r}"
    for what, rx in (("closed answers", _CLOSED), ("a number", _NUMBER)):
        m = rx.search(text)
        if m:
            return f"{what} {m.group()!r}"
    return ""
