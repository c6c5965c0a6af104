"""Tokenize pairs exactly as the user's trainer sees them (see :mod:`pairaudit.trainer.profiles`).

``DPOTokenizer`` follows a trainer profile. TRL >= 0.29 tokenizes the prompt and prompt + completion as
whole texts (EOS text appended to standard completions, the chat template for conversational ones) and
takes the completion as what follows the prompt's ids; TRL < 0.29 tokenizes prompt, chosen and rejected
separately and appends the EOS id. Implicit-prompt rows are split the way TRL splits them
(``extract_prompt``). Truncation: the prompt to its last ``max_prompt_length`` tokens and completions to
their first ``max_completion_length`` (old TRL only), then prompt + completion to ``max_length`` by
``truncation_mode`` (``keep_start``: its first tokens, ``keep_end``: its last).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pairaudit.datatypes import Pair
from pairaudit.errors import ModelError
from pairaudit.io.formats import IMPLICIT_FORMATS
from pairaudit.trainer import joint_tokens, long_text, profiles, split
from pairaudit.trainer.memo import TextMemo
from pairaudit.trainer.profiles import TrainerSettings
from pairaudit.trainer.truncation import kept_sequence, truncate

TEXT_MEMO = 4_096
"""Texts whose ids :meth:`DPOTokenizer.text_ids` remembers per ``add_special_tokens`` value: prompts the
per-pair checks tokenize again (``prefix_pair``, ``split_word``), ~1.2 KB of ids each at HH's ~300 tokens
(4 bytes an id) plus the text, so ~10 MB a worker at most."""

@dataclass(slots=True)
class EncodedPair:
    """Token ids of one pair as the trainer builds them, before truncation, plus what survives it.

    ``chosen_ids``/``rejected_ids`` are completion tokens (with the EOS the trainer appends, if any).
    ``*_kept`` are the numbers of (prompt, completion) tokens the trainer keeps after all truncation
    (the loss only sees kept completion tokens); :meth:`DPOTokenizer.kept_ids` gives the tokens.
    ``eos_added``: whether the trainer appended an EOS to (chosen, rejected). ``prompt_left_out``: TRL >=
    1.14.2 starts the completion where the tokenized prompt and prompt + completion diverge; this many
    tokens at the end of the prompt's own tokenization are then not in the training sequence (TRL warns "The
    tokenized prompt is not a prefix of the tokenized prompt+completion"): tokens merged across the
    boundary, or a chat template that renders the prompt alone differently.
    """

    prompt_ids: list[int]
    chosen_ids: list[int]
    rejected_ids: list[int]
    chosen_kept: tuple[int, int]  # (prompt tokens kept, completion tokens kept)
    rejected_kept: tuple[int, int]
    eos_added: tuple[bool, bool] = (True, True)
    prompt_left_out: int = 0  # tokens of the prompt's own tokenization the trainer leaves out (TRL's warning)

    def content_lengths(self) -> tuple[int, int, int]:
        """(prompt, chosen, rejected) token counts without the EOS the trainer appended."""
        return (len(self.prompt_ids), len(self.chosen_ids) - int(self.eos_added[0] and bool(self.chosen_ids)),
                len(self.rejected_ids) - int(self.eos_added[1] and bool(self.rejected_ids)))


class Rendered(tuple):
    """The three texts the trainer tokenizes for one pair.

    Separate tokenization (TRL < 0.29): (prompt, chosen, rejected). Joint tokenization (TRL >= 0.29):
    (prompt, prompt + chosen, prompt + rejected). ``special``: tokenized with the tokenizer's special
    tokens (BOS...); ``eos``: whether an EOS id is appended to (chosen, rejected) after tokenization;
    ``eos_text``: whether the trainer appended the EOS text (joint, standard data).
    """

    special: bool
    joint: bool
    eos_ids: bool
    eos_text: bool

    def __new__(cls, texts: tuple[str, str, str], *, special: bool = False, joint: bool = False,
                eos_ids: bool = True, eos_text: bool = False) -> Rendered:
        obj = super().__new__(cls, texts)
        obj.special, obj.joint, obj.eos_ids, obj.eos_text = special, joint, eos_ids, eos_text
        return obj


class DPOTokenizer:
    """The user's training tokenizer with the trainer semantics that decide tokens and truncation.

    ``tokenizer``: a ``transformers`` tokenizer (:func:`pairaudit.models.tokenizer.load_tokenizer`);
    ``spec``: where it came from (a ``models.loading.ModelSpec``, for its display name) or None.
    ``trainer``: :class:`~pairaudit.profiles.TrainerSettings` (what a scan passes), or a profile name
    with the keyword limits (``"auto"`` = the profile's default). Without it the keywords alone give
    pairaudit's earlier behaviour (``profiles.KEYWORD_PROFILE``: TRL 0.20-0.27 rules).
    """

    def __init__(self, tokenizer: Any, spec: Any, *, max_length: int | None | str = profiles.AUTO,
                 max_prompt_length: int | None | str = profiles.AUTO,
                 max_completion_length: int | None | str = profiles.AUTO, truncation_mode: str = profiles.AUTO,
                 trainer: TrainerSettings | str | None = None) -> None:
        if not isinstance(trainer, TrainerSettings):
            trainer = profiles.settings(trainer, max_length=max_length, max_prompt_length=max_prompt_length,
                                        max_completion_length=max_completion_length, truncation_mode=truncation_mode,
                                        profile=None if trainer else profiles.KEYWORD_PROFILE)
        self.trainer = trainer
        self.profile = trainer.profile
        self.tok = tokenizer
        self.spec = spec
        self.max_length = trainer.max_length
        self.max_prompt_length = trainer.max_prompt_length
        self.max_completion_length = trainer.max_completion_length
        self.truncation_mode = trainer.truncation_mode
        self.eos_id: int | None = tokenizer.eos_token_id
        self.eos_token: str | None = tokenizer.eos_token
        self.pad_id: int | None = tokenizer.pad_token_id
        self.vocab_size: int = len(tokenizer)
        self.special_ids: frozenset[int] = frozenset(int(i) for i in tokenizer.all_special_ids)
        self.unk_id: int | None = tokenizer.unk_token_id
        specials = sorted({str(t) for t in tokenizer.all_special_tokens if str(t)}, key=len, reverse=True)
        self._special_re = re.compile("|".join(re.escape(s) for s in specials)) if specials else None
        backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
        self._backend = backend
        self._splitter: Any = False  # joint_tokens.JointSplitter, None when not covered (built on first use)
        # one text's ids (a prompt the per-pair checks read again), per add_special_tokens value
        self._text_memo: dict[bool, TextMemo[long_text.TokenIds]] = {False: TextMemo(TEXT_MEMO),
                                                                   True: TextMemo(TEXT_MEMO)}
        self.has_chat_template = bool(getattr(tokenizer, "chat_template", None))

    # -- text ---------------------------------------------------------------------------------
    def strip_special(self, text: str) -> str:
        """Text with every special-token string (e.g. ``<|im_end|>``) removed."""
        return self._special_re.sub("", text) if self._special_re else text

    def _trainer_parts(self, pair: Pair) -> tuple[Any, Any, Any]:
        """(prompt, chosen, rejected) as the trainer's dataset holds them: texts or message lists, with
        implicit prompts split by TRL's ``extract_prompt``."""
        implicit = pair.format in IMPLICIT_FORMATS
        if pair.conversational:
            pm, cm, rm = pair.prompt_messages or [], pair.chosen_messages or [], pair.rejected_messages or []
            if implicit and not self.profile.pairaudit_legacy:
                return profiles.trl_extract_prompt(pm + cm, pm + rm)
            return pm, cm, rm
        p, c, r = pair.prompt or "", pair.chosen or "", pair.rejected or ""
        if implicit and not self.profile.pairaudit_legacy:  # the transcribed loop's result, on C-level compares
            return split.trl_extract_prompt_text(p + c, p + r)
        return p, c, r

    def render(self, pair: Pair) -> Rendered:
        """The texts the trainer tokenizes (chat template applied), see :class:`Rendered`."""
        prompt, chosen, rejected = self._trainer_parts(pair)
        joint = self.profile.joint
        if not pair.conversational:
            if not joint:
                return Rendered((prompt, chosen, rejected), eos_ids=True)
            eos = self.eos_token or ""  # TRL appends the EOS text unless the completion already ends with it
            c = chosen if not eos or chosen.endswith(eos) else chosen + eos
            r = rejected if not eos or rejected.endswith(eos) else rejected + eos
            return Rendered((prompt, prompt + c, prompt + r), special=True, joint=True, eos_ids=False,
                            eos_text=bool(eos))
        if not self.has_chat_template:
            raise ModelError(
                f"row {pair.row} is conversational but the tokenizer {self.display} has no chat template",
                fix="pass --tokenizer with the chat template your trainer uses")
        apply = self.tok.apply_chat_template
        if joint:  # TRL >= 0.29: the prompt always gets the generation prompt
            if not prompt:
                raise ValueError("the trainer's prompt is an empty message list (for implicit prompts: the first "
                                 "messages differ): TRL fails on it (IndexError in is_conversational or "
                                 "ValueError: Cannot apply chat template to an empty conversation)")
            texts = (apply(prompt, tokenize=False, add_generation_prompt=True),
                     apply(prompt + chosen, tokenize=False), apply(prompt + rejected, tokenize=False))
            return Rendered(texts, joint=True, eos_ids=False)
        if not prompt:
            p_text = ""
        else:  # TRL < 0.29 maybe_apply_chat_template
            role = prompt[-1].get("role")
            if role == "assistant":
                p_text = apply(prompt, tokenize=False, continue_final_message=True)
            elif role in ("user", "tool") or self.profile.pairaudit_legacy:
                p_text = apply(prompt, tokenize=False, add_generation_prompt=True)
            else:
                raise ValueError(f"the prompt's last message has role {role!r}; TRL < 0.29 accepts user, tool or "
                                 "assistant (ValueError: Invalid role in the last message)")
        full_c, full_r = apply(prompt + chosen, tokenize=False), apply(prompt + rejected, tokenize=False)
        p1 = p_text[:profiles.common_prefix_length(p_text, full_c)]  # TRL's takewhile: the prompt as it starts prompt+completion
        c_text = full_c[len(p1):]
        p2 = p1[:profiles.common_prefix_length(p1, full_r)]
        return Rendered((p2, c_text, full_r[len(p2):]), eos_ids=self.profile.chat_eos)

    @property
    def display(self) -> str:
        return self.spec.display if self.spec else type(self.tok).__name__

    # -- ids ----------------------------------------------------------------------------------
    def encode_texts(self, texts: list[str], add_special_tokens: bool = False) -> list[list[int]]:
        """Ids of each text; a very long text's ids are :class:`~pairaudit.trainer.long_text.TokenIds`,
        encoded in pieces (same ids, bounded memory)."""
        if self._backend is not None:
            return long_text.encode(self._backend, texts, add_special_tokens, self.splitter)
        return self.tok(texts, add_special_tokens=add_special_tokens)["input_ids"]

    def text_ids(self, text: str, add_special_tokens: bool) -> long_text.TokenIds:
        """``encode_texts([text], add_special_tokens)[0]`` as :class:`~pairaudit.trainer.long_text.TokenIds`,
        computed once per distinct text while remembered (a prompt shared by several pairs).

        Args:
            text: the text to tokenize.
            add_special_tokens: as in :meth:`encode_texts`.

        Returns:
            Its ids (4 bytes each; equal to the list ``encode_texts`` gives). Not to be changed in place."""
        return self._text_memo[add_special_tokens].get(  # a large text: not remembered
            text, lambda t: long_text.TokenIds(self.encode_texts([t], add_special_tokens)[0]), long_text.LONG_CHARS)

    def kept(self, prompt_len: int, completion_len: int) -> tuple[int, int]:
        return truncate(prompt_len, completion_len, max_length=self.max_length,
                        max_prompt_length=self.max_prompt_length,
                        max_completion_length=self.max_completion_length, truncation_mode=self.truncation_mode)

    def kept_ids(self, prompt_ids: list[int], completion_ids: list[int]) -> tuple[list[int], list[int]]:
        """The (prompt, completion) tokens the trainer keeps of one sequence after truncation."""
        return kept_sequence(prompt_ids, completion_ids, self.kept(len(prompt_ids), len(completion_ids)),
                             self.truncation_mode, max_prompt_length=self.max_prompt_length,
                             max_completion_length=self.max_completion_length)

    def encode_rendered(self, rendered: list[tuple[str, str, str]], *, once: bool | None = None) -> list[EncodedPair]:
        """Token ids of rendered pairs. ``once``: joint texts whose prompt/completion junction is a certain
        pre-token boundary (:mod:`pairaudit.trainer.joint_tokens`) tokenize the prompt once (None: ``joint_tokens.ENABLED``);
        same ids."""
        n = len(rendered)
        ids: list[list[int]] = [[]] * (3 * n)
        split_at: dict[int, int] = {}  # joint rows tokenized in parts: ids already (prompt, chosen, rejected)
        if (joint_tokens.ENABLED if once is None else once) and self.splitter is not None:
            split_at = joint_tokens.encode_parts(self.splitter, rendered, ids, self.profile.common_prefix)
        for special in (False, True):
            idx = [i for i in range(n) if i not in split_at
                   and bool(getattr(rendered[i], "special", False)) is special]
            if idx:
                enc = self.encode_texts([t for i in idx for t in rendered[i]], add_special_tokens=special)
                for k, i in enumerate(idx):
                    ids[3 * i: 3 * i + 3] = enc[3 * k: 3 * k + 3]
        eos = [self.eos_id] if self.eos_id is not None else []
        out = []
        for i in range(n):
            rd = rendered[i]
            p, c, r = ids[3 * i], ids[3 * i + 1], ids[3 * i + 2]
            left_out = split_at.get(i, 0)
            if i in split_at:  # joint texts tokenized in parts: prompt + completion ids diverge where the prompt ends
                added = (bool(getattr(rd, "eos_text", False)),) * 2
            elif getattr(rd, "joint", False):
                cut = len(p)
                if self.profile.common_prefix:  # TRL >= 1.14.2: where prompt and prompt+completion diverge
                    cut = min(profiles.common_prefix_length(p, c), profiles.common_prefix_length(p, r))
                p, c, r, left_out = p[:cut], c[cut:], r[cut:], len(p) - cut
                added = (bool(getattr(rd, "eos_text", False)),) * 2
            else:
                with_eos = bool(getattr(rd, "eos_ids", True))
                if with_eos:
                    c, r = c + eos, r + eos
                added = (with_eos and bool(eos),) * 2
            out.append(EncodedPair(p, c, r, self.kept(len(p), len(c)), self.kept(len(p), len(r)), added, left_out))
        return out

    @property
    def splitter(self) -> Any:
        if self._splitter is False:
            self._splitter = joint_tokens.JointSplitter.for_backend(self._backend) if self._backend is not None else None
        return self._splitter

    def encode_pairs(self, pairs: list[Pair]) -> list[EncodedPair]:
        """Encode text pairs (pre-tokenized pairs must be handled by the caller)."""
        return self.encode_rendered([self.render(p) for p in pairs])
