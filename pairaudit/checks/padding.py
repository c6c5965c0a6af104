"""``all_padding``: a side made only of padding/special tokens, or fully masked."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck, is_blank
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class AllPadding(PairCheck):
    info = CheckInfo(
        "all_padding",
        "a side whose tokens are all padding/special tokens (text made only of strings like '<|im_end|>'; "
        "pre-tokenized ids all pad/eos/bos — pad == eos is handled by looking at ids and masks, not at pad "
        "alone), or whose attention mask or label mask is all zero / all -100",
        "drop",
        summary="a side of only padding tokens",
        why="an all-padding side has no loss tokens: its log-probability is 0 or NaN after masking",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        if pair.pretokenized:
            self._ids(pair, out)
            return
        assert self.tok is not None
        for side in ("prompt", "chosen", "rejected"):
            text = getattr(pair, side)
            if not is_blank(text) and is_blank(self.tok.strip_special(text)):
                out.append(self.finding(pair.row, side, 1.0,
                                   detail=f"{side} holds only special-token strings: {text.strip()[:60]!r}"))

    def _ids(self, pair: Pair, out: list[Finding]) -> None:
        ids = pair.ids or {}
        special = self.tok.special_ids if self.tok else frozenset()
        for side in ("prompt", "chosen", "rejected"):
            seq = ids.get(f"{side}_input_ids")
            if seq and all(i in special for i in seq):
                out.append(self.finding(pair.row, side, 1.0,
                                   detail=f"all {len(seq)} {side} ids are special/padding ids {sorted(set(seq))[:5]}"))
                continue
            mask = ids.get(f"{side}_attention_mask")
            if mask is not None and len(mask) > 0 and not any(mask):
                out.append(self.finding(pair.row, side, 1.0, detail=f"{side}_attention_mask is all zero"))
                continue
            labels = ids.get(f"{side}_labels")
            if labels is not None and len(labels) > 0 and all(x == -100 for x in labels):
                out.append(self.finding(pair.row, side, 1.0,
                                   detail=f"{side}_labels are all -100: no token carries loss"))
