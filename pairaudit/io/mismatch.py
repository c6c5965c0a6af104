"""Which side of an implicit-prompt pair adds or changes a dialogue turn (``prompt_mismatch``'s detail).

An implicit prompt is the history both sides share. When the histories differ, either one side's reply
holds further turns the other lacks (a reply that invents "\\n\\nHuman: ..." and answers it: on real HH
rows this is the rejected reply, a fault that makes a useful negative), or a turn of the history itself
differs. ``side`` is ``"chosen"`` / ``"rejected"`` in the first case and None in the second.
"""

from __future__ import annotations

import re
from typing import Any

HH_ASSISTANT = "\n\nAssistant:"
HH_HUMAN = "\n\nHuman:"
_HH_TURN = re.compile(r"\n\n(Human|Assistant):")
#: a speaker label at the start of a line of a reply ("Human: ...", " Assistant:"): HH replies that begin
#: with the user's label, or go on with a line in the user's voice, without a later assistant turn
_ROLE_LINE = re.compile(r"(?:^|\n)[ \t]*(Human|Assistant)[ \t]*:")


def _quote(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[:n] + "…")


def _turns(dialogue: str) -> list[tuple[str, str]]:
    """(role, text) of each turn of an HH dialogue string."""
    parts = _HH_TURN.split(dialogue)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def _first_difference(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> str:
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if k >= min(len(a), len(b)):
        return f"the chosen dialogue has {len(a)} turns, the rejected {len(b)}"
    role = a[k][0] if a[k][0] == b[k][0] else f"{a[k][0]} / {b[k][0]}"
    return f"turn {k + 1} ({role}) differs: chosen {_quote(a[k][1])} vs rejected {_quote(b[k][1])}"


def hh_mismatch(chosen: str, rejected: str, c: str, r: str) -> tuple[str | None, str]:
    """(side, note) for HH dialogues whose histories differ; ``c`` / ``r``: the replies after the shared
    prompt. A reply holding turn markers the other lacks adds turns (that side); both: the histories differ."""
    adds = [side for side, resp in (("chosen", c), ("rejected", r)) if HH_ASSISTANT in resp or HH_HUMAN in resp]
    if len(adds) == 1:
        side = adds[0]
        resp = c if side == "chosen" else r
        k = min(i for i in (resp.find(HH_HUMAN), resp.find(HH_ASSISTANT)) if i >= 0)
        start = max(0, resp.rfind("\n\n", 0, k))  # the paragraph before the first marker: the invented user line
        n = len(_HH_TURN.findall(resp))
        return side, (f"the histories are the same; the {side} reply goes on with dialogue turns of its own "
                      f"({n} turn marker(s)): {_quote(resp[max(start, k - 80):k + 40], 130)}")
    return None, "dialogue histories differ before the last assistant turn: " + _first_difference(
        _turns(chosen), _turns(rejected))


def messages_mismatch(hist_c: list[dict[str, Any]], hist_r: list[dict[str, Any]]) -> tuple[str | None, str]:
    """(side, note) for message histories (before each side's last assistant turn) that differ."""
    for side, short, long in (("rejected", hist_c, hist_r), ("chosen", hist_r, hist_c)):
        if len(long) > len(short) and long[:len(short)] == short:
            extra = long[len(short):]
            return side, (f"the histories are the same; the {side} side adds {len(extra)} turn(s) before its last "
                          f"assistant turn: {extra[0]['role']} {_quote(str(extra[0].get('content', '')))}")
    k = next((i for i, (x, y) in enumerate(zip(hist_c, hist_r)) if x != y), min(len(hist_c), len(hist_r)))
    a, b = hist_c[k], hist_r[k]
    role = a["role"] if a["role"] == b["role"] else f"{a['role']} / {b['role']}"
    return None, (f"chosen and rejected message histories differ before the last assistant turn: message {k + 1} "
                  f"({role}) differs: chosen {_quote(str(a.get('content', '')))} vs rejected "
                  f"{_quote(str(b.get('content', '')))}")


def hh_role_marker(c: str, r: str) -> tuple[str, str] | None:
    """(side, note) when the histories are the same but a reply writes a speaker label on a line of its own
    ("Human: Yes, clicking the microphone icon ..."): the trainer would teach the policy to write it. Both
    sides: the chosen one is named (it is what the policy learns).

    Example:
        >>> hh_role_marker(" Human: Yes, it will.", " Sure, it will.")[0]
        'chosen'
    """
    for side, resp in (("chosen", c), ("rejected", r)):
        m = _ROLE_LINE.search(resp) if "Human" in resp or "Assistant" in resp else None  # the label's word first
        if m:
            return side, (f"the histories are the same; the {side} reply writes a '{m.group(1)}:' speaker label "
                          f"(the trainer would teach the policy to write it): "
                          f"{_quote(resp[max(0, m.start() - 40):m.end() + 60], 130)}")
    return None
