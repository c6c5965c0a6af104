"""empty_response: an empty, whitespace- or invisible-only chosen or rejected (text or ids), on its side."""

from __future__ import annotations

import pytest
from support.checks import found

from pairaudit.checks.empty import EmptyResponse


@pytest.mark.parametrize(("chosen", "rejected", "sides"), [
    ("", "Something.", ["chosen"]),
    ("Something.", " \n ", ["rejected"]),
    ("\u200b  ", "\u2060", ["chosen", "rejected"]),
    ("Something.", "Something else.", []),
    (".", "0", []),
])
def test_blank_sides_are_found_on_their_side(chosen: str, rejected: str, sides: list[str]) -> None:
    got = found(EmptyResponse, {"prompt": "Say something.", "chosen": chosen, "rejected": rejected})
    assert got == [(s, f"{s} response is empty") for s in sides]


@pytest.mark.parametrize(("chosen", "rejected", "sides"), [
    ([], [7, 2], ["chosen"]), ([5, 2], [], ["rejected"]), ([5, 2], [7, 2], [])])
def test_empty_id_lists(chosen: list[int], rejected: list[int], sides: list[str]) -> None:
    got = found(EmptyResponse, {"prompt_input_ids": [1, 3], "chosen_input_ids": chosen, "rejected_input_ids": rejected})
    assert [f for f, _ in got] == sides
