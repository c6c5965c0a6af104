"""identical_pair: chosen equals rejected after whitespace normalisation (text, messages or ids)."""

from __future__ import annotations

import pytest
from support.checks import found


def msgs(*texts: str) -> list[dict[str, str]]:
    return [{"role": r, "content": t} for r, t in zip(("user", "assistant") * 2, texts)]


@pytest.mark.parametrize(("record", "hit"), [
    ({"prompt": "Is it true?", "chosen": "Yes,   it is true.", "rejected": "Yes, it is true."}, True),
    ({"prompt": "Is it true?", "chosen": " Yes.\n", "rejected": "Yes."}, True),
    ({"prompt": "Is it true?", "chosen": "Yes.", "rejected": "yes."}, False),  # case is a difference
    ({"prompt": "Is it true?", "chosen": "Yes.", "rejected": "Yes!"}, False),
    ({"chosen": msgs("Hi", "Hello  there"), "rejected": msgs("Hi", "Hello there")}, True),
    ({"chosen": msgs("Hi", "Hello"), "rejected": msgs("Hi", "Goodbye")}, False),
    ({"chosen_input_ids": [5, 6, 2], "rejected_input_ids": [5, 6, 2]}, True),
    ({"chosen_input_ids": [5, 6, 2], "rejected_input_ids": [5, 7, 2]}, False),
], ids=["spaces", "edges", "case", "punctuation", "messages", "other-messages", "ids", "other-ids"])
def test_identical_sides(record: dict, hit: bool) -> None:
    from pairaudit.checks.identical import IdenticalPair

    assert found(IdenticalPair, record) == ([("rejected", "chosen == rejected")] if hit else [])
