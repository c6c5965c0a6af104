"""``length_outlier``: token lengths far outside the dataset's own distribution.

Robust z-score on log lengths: ``|log1p(n) - median| / (1.4826 * MAD)``, per side, over all pairs
that reached the stage. Keeps 13 bytes a row (three int32 lengths and a flag). Token lengths are integers,
so a histogram per side (distinct lengths and their counts, a few thousand numbers) is an exact, mergeable
summary: the median and MAD computed from the merged histograms equal ``np.median`` over all rows, and
the Ray engine scores each shard's rows where they are against the whole dataset's summary.

Lengths are the trainer's: for an implicit-prompt pair whose responses open alike, TRL's prompt takes
the shared text (:mod:`pairaudit.trainer.split`), so a completion can be far shorter than the response
reads; such findings say so and point at ``prefix_pair`` instead of making a length claim about the text.

Lengths are judged within the prompt's kind: a response shorter than its side's median is no outlier when
the prompt asks for a short answer (:func:`pairaudit.checks.prompt_kind.short_answer_cue`: an answer slot
such as ``Output:`` / ``[EX A]:`` at its end, a closed set of answers, a number), so "No" to a yes/no task
is not flagged; a one-token answer to an open prompt ("how to cook t-bone in the oven") still is.
"""

from __future__ import annotations

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.checks.prompt_kind import pair_short_answer_cue
from pairaudit.datatypes import Pair, StageResult
from pairaudit.stages.base import Stage
from pairaudit.stages.state import Column
from pairaudit.trainer.split import implicit_split
from pairaudit.trainer.tokenizer import EncodedPair

LENGTH_OUTLIER_INFO = CheckInfo(
    "length_outlier",
    "token length far outside the dataset's own distribution (robust z-score of log length, median/MAD "
    "with the scale floored at 0.25, above max_z), or a response of at most min_tokens content tokens; a short "
    "response to a prompt that asks for a short answer (an answer slot such as 'Output:', a closed set of "
    "answers, a number) is no outlier",
    "flag",
    summary="length far from the dataset's",
    kind="global",
    thresholds={"max_z": 5.0, "min_tokens": 1},
    why="outliers are often scraping accidents, but some datasets have legitimately short or long answers",
)
SIDES = ("prompt", "chosen", "rejected")
MIN_SCALE = 0.25  # in log-length units


class LengthStage(Stage):
    infos = (LENGTH_OUTLIER_INFO,)

    # _shared: the trainer's prompt took response text (prefix_pair); _short: the prompt asks for a short answer
    state = {"_rows": Column(np.int64), "_lens": Column(np.int32), "_shared": Column(np.bool_),
             "_short": Column(np.bool_)}
    distribute = "summary"

    def __init__(self, ctx, enabled):
        super().__init__(ctx, enabled)
        self._eos = 0

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        lens = np.zeros((len(pairs), 3), np.int32)
        shared = np.zeros(len(pairs), np.bool_)
        short = np.fromiter((bool(pair_short_answer_cue(p)) for p in pairs), np.bool_, len(pairs))
        for i, pair in enumerate(pairs):
            if encoded is not None and encoded[i] is not None:
                e = encoded[i]
                lens[i] = e.content_lengths()  # content tokens: without the EOS the trainer appends
                sp = implicit_split(pair)
                shared[i] = sp is not None and sp.absorbs
            elif pair.ids is not None:
                lens[i] = [len(pair.ids.get(f"{s}_input_ids") or []) for s in SIDES]
        self._rows.append(np.fromiter((p.row for p in pairs), np.int64, len(pairs)))
        self._lens.append(lens)
        self._shared.append(shared)
        self._short.append(short)

    def summary(self) -> dict[str, list[np.ndarray]]:
        """Per side: the distinct token lengths and how many rows have each."""
        lens = np.concatenate(self._lens) if self._lens else np.zeros((0, 3), np.int32)
        values, counts = [], []
        for k in range(3):
            v, c = np.unique(lens[:, k], return_counts=True)
            values.append(v.astype(np.int64))
            counts.append(c.astype(np.int64))
        return {"values": values, "counts": counts}

    @staticmethod
    def merge_summaries(parts: list[dict[str, list[np.ndarray]]]) -> dict[str, list[np.ndarray]]:
        values, counts = [], []
        for k in range(3):
            v = np.concatenate([np.asarray(p["values"][k], np.int64) for p in parts])
            c = np.concatenate([np.asarray(p["counts"][k], np.int64) for p in parts])
            u, inv = np.unique(v, return_inverse=True)
            values.append(u)
            counts.append(np.bincount(inv, weights=c, minlength=len(u)).astype(np.int64))
        return {"values": values, "counts": counts}

    def finalize(self, summary: dict[str, list[np.ndarray]] | None = None) -> StageResult:
        """Findings and scores of this instance's rows; ``summary``: the whole dataset's (default: these rows')."""
        res = StageResult()
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        lens = np.concatenate(self._lens)
        shared = np.concatenate(self._shared) if self._shared else np.zeros(len(rows), np.bool_)
        short = np.concatenate(self._short) if self._short else np.zeros(len(rows), np.bool_)
        params = self.params(LENGTH_OUTLIER_INFO)
        logl = np.log1p(lens.astype(np.float64))
        med, mad = _median_mad(summary if summary is not None else self.summary())
        # a floor on the scale keeps near-uniform datasets (MAD ~ 0) from flagging tiny differences:
        # with the floor, z > 5 needs at least a 3.5x length ratio to the median
        z = np.abs(logl - med) / np.maximum(mad, MIN_SCALE)
        worst = z.max(axis=1)
        res.rows = rows
        res.scores[LENGTH_OUTLIER_INFO.score_key] = worst
        res.stats["length_outlier"] = {f"median_{s}_tokens": float(np.expm1(med[k])) for k, s in enumerate(SIDES)}
        if "length_outlier" not in self.enabled:
            return res
        for i in range(len(rows)):
            for k, side in enumerate(SIDES):
                n = int(lens[i, k])
                if side != "prompt" and short[i] and logl[i, k] < med[k]:
                    continue  # a short answer to a prompt that asks for one (checks.prompt_kind)
                # the trainer's prompt took response text (prefix_pair): say whose length this is
                what, why = side, ""
                if shared[i]:
                    what = f"the trainer's {side}" + ("" if side == "prompt" else " completion")
                    why = (" (the trainer's prompt took the text both responses open with: prefix_pair_score in "
                           "scores.parquet counts those tokens, and prefix_pair names the row from 3 of them)")
                neg = REJECTED_ONLY if side == "rejected" and not shared[i] and logl[i, k] < med[k] and lens[i, 1] > max(
                    params["min_tokens"], n) else ""
                if z[i, k] > params["max_z"]:
                    typical = float(np.expm1(med[k]))
                    res.findings.append(LENGTH_OUTLIER_INFO.finding(int(rows[i]), side, float(z[i, k]),
                                                detail=f"{what} {n} tokens vs median {typical:.0f} "
                                                       f"(robust z {z[i, k]:.1f}){why}{neg}"))
                elif side != "prompt" and 0 < n <= params["min_tokens"]:
                    before = " before the EOS" if shared[i] else ""
                    res.findings.append(LENGTH_OUTLIER_INFO.finding(int(rows[i]), side, float(z[i, k]),
                                                detail=f"{what} has only {n} token(s){before}{why}{neg}"))
        return res


#: a short rejected answer beside a full chosen one (issue 34: "'Game' to a request for a table: a useless
#: answer, but a fine negative"): worth a look for truncation, not a broken pair
REJECTED_ONLY = ("; the rejected side only: a cut-off or useless answer is still a usable negative when the chosen "
                 "is sound, so read it for truncation (the row is kept)")


def _weighted_median(values: np.ndarray, counts: np.ndarray) -> float:
    """``np.median`` of the multiset (each value repeated its count times)."""
    order = np.argsort(values, kind="stable")
    values, ends = values[order], np.cumsum(counts[order])
    n = int(ends[-1])
    mid = np.searchsorted(ends, [(n - 1) // 2, n // 2], side="right")
    return float(values[mid[0]]) if n % 2 else float(np.mean(values[mid]))


def _median_mad(summary: dict[str, list[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Median and 1.4826 * MAD of log1p(length), per side, exactly as over the rows themselves."""
    med, mad = np.zeros(3), np.zeros(3)
    for k in range(3):
        logv = np.log1p(np.asarray(summary["values"][k]).astype(np.float64))
        counts = np.asarray(summary["counts"][k])
        med[k] = _weighted_median(logv, counts)
        mad[k] = _weighted_median(np.abs(logv - med[k]), counts)
    return med, mad * 1.4826
