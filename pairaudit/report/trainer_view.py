"""A pair as the trainer sees it: the token sequences it keeps after truncation, decoded.

The scan's own tokenizer and limits (report.json ``config``) are rebuilt the way the scan built them
(``BatchProcessor.load_tokenizer``); each side is encoded (chat template and EOS included) and cut
with :func:`pairaudit.trainer.tokenizer.kept_sequence`, then decoded with special tokens kept, so a reader sees
exactly which text reaches the loss and where it was cut.
"""

from __future__ import annotations

from typing import Any

from pairaudit.datatypes import Pair

TEXT_LIMIT = 6000  # characters of decoded kept text shown per part


def trainer_tokenizer(report: dict[str, Any]) -> tuple[Any, str]:
    """(DPOTokenizer or None, note). None with a note saying why when it cannot be rebuilt."""
    if not report.get("config"):
        return None, "the trainer view needs report.json's config"
    try:
        from pairaudit.batch import BatchProcessor
        from pairaudit.config import ScanConfig

        cfg = ScanConfig(**report["config"])
        columns = (report.get("source") or {}).get("columns") or {}
        proc = BatchProcessor.for_config(cfg, columns=columns, fmt=(report.get("source") or {}).get("format"))
        return proc.load_tokenizer(), ""
    except Exception as exc:  # noqa: BLE001 - a moved tokenizer folder, an old config...
        return None, f"trainer view unavailable: {type(exc).__name__}: {str(exc)[:200]}"


def _part(tok: Any, full: list[int], kept: list[int]) -> dict[str, Any]:
    """Decoded kept tokens of one part and how many were cut before / after them."""
    n_full, n_kept = len(full), len(kept)
    start = 0
    if n_kept and n_kept < n_full and full[n_full - n_kept:] == kept:
        start = n_full - n_kept  # kept the end: cut at the start
    text = _decode(tok, kept)
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT // 2] + f"\n[… {len(text) - TEXT_LIMIT} characters not shown …]\n" + text[-TEXT_LIMIT // 2:]
    return {"text": text, "before": start, "after": n_full - n_kept - start, "kept": n_kept, "total": n_full}


def _decode(tok: Any, ids: list[int]) -> str:
    """Decoded ids, special tokens kept; ids outside the vocabulary (pre-tokenized data) appear as
    ``⟨id N⟩`` instead of failing."""
    vocab = int(getattr(tok, "vocab_size", 0) or len(tok.tok))
    out, run = [], []
    for i in ids:
        if 0 <= int(i) < vocab:
            run.append(int(i))
            continue
        if run:
            out.append(tok.tok.decode(run, skip_special_tokens=False))
            run = []
        out.append(f"⟨id {int(i)}⟩")
    if run:
        out.append(tok.tok.decode(run, skip_special_tokens=False))
    return "".join(out)


def trainer_view(tok: Any, pair: Pair | None) -> dict[str, Any] | None:
    """Template context of the trainer's view of ``pair`` (None when there is nothing to show)."""
    from pairaudit.trainer.truncation import kept_sequence

    if tok is None or pair is None:
        return None
    try:
        if pair.pretokenized:
            ids = pair.ids or {}
            prompt = list(ids.get("prompt_input_ids") or [])
            sides = {"chosen": list(ids.get("chosen_input_ids") or []),
                     "rejected": list(ids.get("rejected_input_ids") or [])}
        else:
            if pair.chosen is None or pair.rejected is None:
                return None
            enc = tok.encode_pairs([pair])[0]
            prompt, sides = enc.prompt_ids, {"chosen": enc.chosen_ids, "rejected": enc.rejected_ids}
    except Exception as exc:  # noqa: BLE001 - chat templates raise anything
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    cap = getattr(tok, "max_completion_length", None)
    view: dict[str, Any] = {"error": "", "sides": {}}
    prompts = {}
    try:
        for name, ids in sides.items():
            comp = ids if cap is None else ids[:cap]
            kept = tok.kept(len(prompt), len(comp))
            kp, kc = kept_sequence(prompt, comp, kept, tok.truncation_mode)
            prompts[name] = _part(tok, prompt, kp)
            view["sides"][name] = _part(tok, ids, kc)
    except Exception as exc:  # noqa: BLE001 - odd ids or tokenizers must not break the report
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    view["prompt"] = prompts["chosen"]
    view["prompt_rejected"] = prompts["rejected"] if prompts["rejected"]["kept"] != prompts["chosen"]["kept"] else None
    cut = [f"{k} {v['total']} → {v['kept']}" for k, v in (("prompt", prompts["chosen"]), *view["sides"].items())
           if v["kept"] != v["total"]]
    if view["prompt_rejected"] is not None:
        cut.append(f"prompt with rejected {prompts['rejected']['total']} → {prompts['rejected']['kept']}")
    limits = f"max_length {getattr(tok, 'max_length', None)}, truncation_mode {getattr(tok, 'truncation_mode', '?')}"
    if cut:
        view["summary"] = f"truncated: {', '.join(cut)} tokens ({limits})"
    else:
        sizes = f"prompt {len(prompt)}, chosen {len(sides['chosen'])}, rejected {len(sides['rejected'])}"
        view["summary"] = f"not truncated ({sizes} tokens; {limits})"
    view["truncated"] = bool(cut)
    view["split"] = split_note(pair, len(prompt))
    return view


def split_note(pair: Pair, n_prompt: int) -> str:
    """Where the trainer's prompt ends, for an implicit-prompt pair whose prompt took response text
    (TRL's extract_prompt), else ""."""
    from pairaudit.trainer.split import implicit_split

    sp = implicit_split(pair) if not pair.pretokenized else None
    if sp is None or not sp.absorbs:
        return ""
    if isinstance(sp.shared, list):
        return (f"the trainer's prompt ({n_prompt} tokens) also holds {len(sp.shared)} message(s) of the responses "
                "(TRL extract_prompt: the common prefix of chosen and rejected)")
    where = " (inside a word)" if sp.mid_word else ""
    return (f"the trainer's prompt ({n_prompt} tokens) ends{where} at {sp.marked(30)}: TRL's extract_prompt "
            "takes the text both responses open with")
