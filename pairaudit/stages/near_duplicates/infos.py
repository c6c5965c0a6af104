"""The checks of the near-duplicate stage (names, thresholds, descriptions), its embedding modes and the
packages each mode needs."""

from __future__ import annotations

import importlib.util

from pairaudit.checks.base import CheckInfo
from pairaudit.errors import MissingDependency

DEFAULT_MODE = "hybrid"

# report.json's stats.near_duplicates.calibration.space (both engines). Hybrid mode without a candidate pair, or
# without one whose prompts may pass: nothing reads the copy threshold (report.html says so), the transformer
# embeds no response for it
NO_CANDIDATES = "static (hybrid: no candidates)"
NO_PROMPT_PASSED = "static (hybrid: no candidate pair's prompts pass)"
# pairs' prompts pass, but no response of theirs reaches the lowest floor of the rule (verify.responses_reach):
# every such pair is turned down on a response whatever the calibration says, so the sample is not embedded
NO_RESPONSE_REACHED = "static (hybrid: no response of a pair whose prompts pass reaches the floors)"
UNREAD_SPACES = (NO_CANDIDATES, NO_PROMPT_PASSED, NO_RESPONSE_REACHED)  # report.html: "no decision read it"
# the calibration's space otherwise (hybrid mode, both engines): the rows it reads
PROMPTS_PASSED = "transformer (the rows of the candidate pairs whose prompts pass, and a sample)"

NEAR_DUPLICATE_INFO = CheckInfo(
    "near_duplicate_pair",
    "prompt, chosen and rejected are each a copy or paraphrase of another row's: the prompts' similarity "
    "max(embedding cosine, wording) >= min_prompt (static_min_prompt when the static model decides alone, "
    "--fast) and EACH response's >= the copy threshold, calibrated on the "
    "dataset's own different answers to one prompt (no mean: a shared prompt or response never vouches for a "
    "different one); between the unsure-band floor and the copy threshold the row is flagged, not dropped. "
    "Rows of one prompt (same text) also need the wording: two answers to one prompt that mean the same but are "
    "worded apart are different answers (a prompt with exactly two rows that share no response: each differing "
    "response a copy in wording (>= floor_wording_two_rows) or in meaning (cosine >= min_response_flag) flags); "
    "a differing field of two short texts (<= 256 bytes) with other numbers never matches; a group never "
    "joins two rows of one prompt that do not match each other. "
    "group = smallest row of the group, which is kept; score = the weakest response similarity; the detail says "
    "per field why it matched",
    "drop",
    summary="semantic near-duplicate pair",
    thresholds={"min_prompt": 0.85, "static_min_prompt": 0.80, "min_response": 0.85, "min_response_flag": 0.80,
                "max_response": 0.98, "floor_wording_two_rows": 0.70,
                "calibration_quantile": 0.975, "calibration_margin": 0.03, "local_margin": 0.15, "calibration_rows": 256,
                "calibration_pairs": 50000, "candidate_min_prompt": 0.35, "candidate_min_response": 0.65,
                "neighbors": 16, "min_search_cosine": 0.55, "exact_max_rows": 20000, "nprobe": 8,
                "min_rows_static": 100},
    kind="global",
    extra="embed",
    why="near copies over-weight one preference just like exact ones; one representative keeps the signal",
)

# contradictory_pair is declared once (stages/exact.py's CONTRADICTION_INFO); the near-duplicate stage adds
# near contradictions to it: another row has a close prompt and the same two responses, each a copy or
# paraphrase crosswise (its chosen ~ our rejected AND its rejected ~ our chosen, the near_duplicate_pair rule
# and calibrated threshold), preferred the other way; X > Y and Y > Z is no contradiction, nor is a row against
# the copy of another row of its prompt that it does not match; the unsure band flags


def check_deps(mode: str = DEFAULT_MODE) -> None:
    mods = ["torch", "sentence_transformers", "faiss"] if mode != "static" else ["faiss"]
    if mode != "transformer":
        mods.append("model2vec")
    for mod in mods:
        if importlib.util.find_spec(mod) is None:
            raise MissingDependency(mod if mod != "faiss" else "faiss-cpu", "embed",
                                    "near-duplicate search (near_duplicate_pair)")
