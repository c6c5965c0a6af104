"""``split_leakage``: pairs of an evaluation split that also occur in the train split.

Runs when several splits are scanned into one output (``--split all`` or ``--split train,test``); with
one split it is off (report.json says why). The train split is ``train_split`` (default ``train``),
every other scanned split is an evaluation split.

* exact: the same prompt and the same two responses, in either order (the swapped case is named in
  ``detail``), by a 64-bit hash of (prompt, {chosen, rejected}) per row: 17 bytes a row;
* near: eval rows in a ``near_duplicate_pair`` group (embeddings + FAISS, confirmed per field by a
  character ratio) that holds a train row. The stage reads the near-duplicate stage's *findings*
  (``group`` = representative row), not its internals, so near leakage needs that check to run (the
  embed extra); when it did not, report.json ``stats.split_leakage.near`` says so.

Findings go to the eval rows: ``group`` = the smallest matching train row, ``score`` = 1.0 for an exact
match, else the near-duplicate score (smallest field cosine). ``split_leakage_score`` in scores.parquet
is that score for eval rows (0.0 when no match) and null for train rows.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Finding, Pair, StageResult
from pairaudit.hashing import side_digests, unordered_key
from pairaudit.stages.base import Stage
from pairaudit.stages.state import Column

if TYPE_CHECKING:
    from pairaudit.config import Context
    from pairaudit.trainer.tokenizer import EncodedPair

SPLIT_LEAKAGE_INFO = CheckInfo(
    "split_leakage",
    "a pair of an evaluation split also occurs in the train split (train_split): exactly (same prompt, same two "
    "responses in either order) or as a near duplicate (near_duplicate_pair groups, embed extra); only when several "
    "splits are scanned together (--split all). group = the smallest matching train row",
    "drop",
    summary="eval-split pair also in train",
    thresholds={"train_split": "train"},
    kind="global",
    why="an evaluation pair seen in training inflates evaluation results; the eval copy is dropped, the train "
        "copy kept (--flag split_leakage keeps both)",
)


class SplitLeakageStage(Stage):
    infos = (SPLIT_LEAKAGE_INFO,)
    state = {"_rows": Column(np.int64), "_hash": Column(np.uint64), "_flip": Column(np.bool_)}
    reads_findings = True
    distribute, partition_key = "hash", "_hash"  # near matches come as findings, with every member's row

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        super().__init__(ctx, enabled)
        self.train_split = str(self.params(SPLIT_LEAKAGE_INFO)["train_split"])
        self._near: list[tuple[int, int, float | None]] = []
        self._near_ran = False

    @classmethod
    def not_applicable(cls, ctx: Context) -> str | None:
        names = [name for name, _, _ in ctx.splits or []]
        if len(names) < 2:
            return "needs two or more splits scanned together (--split all, or --split train,test)"
        train = str(SPLIT_LEAKAGE_INFO.params(ctx.params)["train_split"])
        if train not in names:
            return (f"no split named {train!r} among the scanned splits {names} "
                    "(--set split_leakage.train_split=NAME)")
        return None

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        n = len(pairs)
        rows, hashes, flip = np.empty(n, np.int64), np.empty(n, np.uint64), np.empty(n, np.bool_)
        for i, pair in enumerate(pairs):
            rows[i] = pair.row
            hashes[i], flip[i] = unordered_key(side_digests(pair))
        self._rows.append(rows)
        self._hash.append(hashes)
        self._flip.append(flip)

    def set_findings(self, findings: list[Finding], ran: set[str]) -> None:
        self._near_ran = "near_duplicate_pair" in ran
        self._near = [(f.row, f.group, f.score) for f in findings
                      if f.check == "near_duplicate_pair" and f.group is not None]

    def _split_of(self, rows: np.ndarray) -> np.ndarray:
        splits = self.ctx.splits or []
        starts = np.asarray([s for _, s, _ in splits], dtype=np.int64)
        return np.searchsorted(starts, rows, side="right") - 1

    def finalize(self) -> StageResult:
        res = StageResult()
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        hashes = np.concatenate(self._hash)
        flip = np.concatenate(self._flip)
        names = [name for name, _, _ in self.ctx.splits or []]
        train_idx = names.index(self.train_split)
        split_idx = self._split_of(rows)
        is_train = split_idx == train_idx
        score = np.where(is_train, np.nan, 0.0)
        pos = {int(r): k for k, r in enumerate(rows)}
        found: dict[int, Finding] = {}

        # exact: eval rows whose unordered pair hash a train row has
        train_first: dict[int, int] = {}
        for k in np.flatnonzero(is_train):
            h = int(hashes[k])
            if h not in train_first or rows[k] < rows[train_first[h]]:
                train_first[h] = int(k)
        for k in np.flatnonzero(~is_train):
            t = train_first.get(int(hashes[k]))
            if t is None:
                continue
            row, trow = int(rows[k]), int(rows[t])
            swapped = " (chosen and rejected swapped)" if flip[k] != flip[t] else ""
            found[row] = SPLIT_LEAKAGE_INFO.finding(row, None, 1.0, trow,
                                 f"{names[split_idx[k]]} row is in {self.train_split}: same prompt and responses as "
                                 f"row {trow}{swapped}")
            score[k] = 1.0

        # near: near_duplicate_pair groups holding train and eval rows
        groups: dict[int, dict[int, float | None]] = defaultdict(dict)
        for row, group, s in self._near:
            groups[group][row] = s
            groups[group].setdefault(group, None)
        for members in groups.values():
            # the members' splits follow from their row numbers: a hash partition of the rows (Ray engine)
            # may hold the eval member but not the train one
            member_rows = np.fromiter(members, np.int64, len(members))
            train_rows = sorted(int(r) for r in member_rows[self._split_of(member_rows) == train_idx])
            ks = [pos[r] for r in members if r in pos]
            if not train_rows:
                continue
            for k in ks:
                row = int(rows[k])
                if is_train[k] or row in found:
                    continue
                s = members[row]
                if s is None:  # the representative: its closest train member's score
                    s = max((members[t] for t in train_rows if members[t] is not None), default=None)
                found[row] = SPLIT_LEAKAGE_INFO.finding(row, None, s, train_rows[0],
                                     f"{names[split_idx[k]]} row is a near duplicate of {self.train_split} row "
                                     f"{train_rows[0]} (near_duplicate_pair group {min(members)})")
                score[k] = s if s is not None else np.nan
        res.findings = sorted(found.values(), key=lambda f: f.row)
        res.rows = rows
        res.scores = {SPLIT_LEAKAGE_INFO.score_key: score}
        n_exact = sum(1 for f in res.findings if f.score == 1.0 and "same prompt" in f.detail)
        stats: dict[str, Any] = {"train_split": self.train_split, "eval_rows": int((~is_train).sum()),
                                 "exact": n_exact, "near": len(res.findings) - n_exact}
        if not self._near_ran:
            stats["near"] = "not checked: near_duplicate_pair did not run (needs the embed extra)"
            self.ctx.log("split_leakage: exact matches only (near_duplicate_pair did not run)")
        res.stats = {"split_leakage": stats}
        return res
