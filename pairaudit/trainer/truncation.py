"""Truncation as the trainer does it: how many prompt and completion tokens survive, and which ones."""

from __future__ import annotations


def truncate(prompt_len: int, completion_len: int, *, max_length: int | None, max_prompt_length: int | None,
             max_completion_length: int | None, truncation_mode: str) -> tuple[int, int]:
    """How many prompt and completion tokens survive TRL's truncation: the prompt keeps its last
    ``max_prompt_length`` tokens, the completion its first ``max_completion_length``, then
    prompt + completion is cut to ``max_length`` (keep_end: its last tokens, keep_start: its first)."""
    p = prompt_len if max_prompt_length is None else min(prompt_len, max_prompt_length)
    c = completion_len if max_completion_length is None else min(completion_len, max_completion_length)
    if max_length is not None and p + c > max_length:
        if truncation_mode == "keep_start":
            p = min(p, max_length)
            c = max_length - p
        else:  # keep_end: drop from the left, prompt first
            over = p + c - max_length
            cut_p = min(over, p)
            p -= cut_p
            c -= over - cut_p
    return p, c


def kept_sequence(prompt_ids: list[int], completion_ids: list[int], kept: tuple[int, int],
                  truncation_mode: str = "keep_end", *, max_prompt_length: int | None = None,
                  max_completion_length: int | None = None) -> tuple[list[int], list[int]]:
    """The (prompt, completion) token lists the trainer keeps, given ``kept`` from ``truncate``.

    Pass the run's ``max_prompt_length`` / ``max_completion_length`` (old TRL only) so the lists are
    cut as the trainer cuts them; without them, ``completion_ids`` must already be capped, and when
    keep_start leaves no completion token the prompt's first ``p`` tokens are returned (exact unless a
    ``max_prompt_length`` also cut that prompt; then no completion token is scored either way).
    """
    if max_prompt_length is not None:
        prompt_ids = prompt_ids[len(prompt_ids) - min(len(prompt_ids), max_prompt_length):]
    if max_completion_length is not None:
        completion_ids = completion_ids[:max_completion_length]
    p, c = kept
    if truncation_mode == "keep_start":  # max_length cuts into the prompt only when no completion token is left
        if c > 0 or p >= len(prompt_ids):
            return prompt_ids[len(prompt_ids) - p:], completion_ids[:c]
        return prompt_ids[:p], []
    prompt = prompt_ids[len(prompt_ids) - p:] if p else []
    if c == 0:
        return prompt, []
    if p == 0 and c < len(completion_ids):  # keep_end cut through the whole prompt into the completion
        return prompt, completion_ids[len(completion_ids) - c:]
    return prompt, completion_ids[:c]
