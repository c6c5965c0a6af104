"""Detect the preference format and normalise records to canonical ``Pair`` objects.

Vocabulary follows TRL: *standard* (text) vs *conversational* (lists of role/content messages),
*explicit* prompt (a ``prompt`` column) vs *implicit* prompt (the prompt is the shared history
inside ``chosen``/``rejected``). Normalisation is idempotent: ``normalise(to_record(pair))``
gives the same pair back.
"""

from __future__ import annotations

import difflib
from typing import Any

from pairaudit.datatypes import Messages, Pair
from pairaudit.errors import ConfigError
from pairaudit.io.mismatch import HH_ASSISTANT, HH_HUMAN, hh_mismatch, hh_role_marker, messages_mismatch

FORMATS = {
    "standard": "explicit prompt, text: {prompt, chosen, rejected}",
    "conversational": "explicit prompt, message lists: {prompt, chosen, rejected} of {role, content}",
    "implicit_conversational": "implicit prompt, message lists: {chosen, rejected} hold the whole dialogue",
    "implicit_hh": "implicit prompt, Anthropic HH strings '\\n\\nHuman: ...\\n\\nAssistant: ...'",
    "pretokenized": "token ids: chosen_input_ids / rejected_input_ids (+ prompt_input_ids, masks, labels)",
    "pairwise_label": "response_a / response_b + label (0 or 'a' = response_a preferred, 1 or 'b' = response_b)",
}
#: formats whose prompt is implicit: the shared start of chosen and rejected (TRL's extract_prompt)
IMPLICIT_FORMATS = ("implicit_hh", "implicit_conversational")
CANONICAL_KEYS = ("prompt", "chosen", "rejected", "response_a", "response_b", "label")
ID_KEYS = ("prompt_input_ids", "chosen_input_ids", "rejected_input_ids", "prompt_attention_mask",
           "chosen_attention_mask", "rejected_attention_mask", "chosen_labels", "rejected_labels")
ROLES = ("system", "user", "assistant", "tool")  # the chat-template vocabulary (TRL / transformers)
SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                  "system": "system", "bot": "assistant", "model": "assistant", "tool": "tool"}


class Malformed(ValueError):
    """A record that cannot become a pair; ``field`` names the culprit."""

    def __init__(self, msg: str, field: str | None = None) -> None:
        super().__init__(msg)
        self.field = field


def parse_columns(spec: str | dict[str, str] | None) -> dict[str, str]:
    """``"chosen=response_a,rejected=response_b"`` -> {"chosen": "response_a", ...}."""
    if not spec:
        return {}
    if isinstance(spec, dict):
        items = list(spec.items())
    else:
        items = []
        for part in spec.split(","):
            if "=" not in part:
                raise ConfigError(f"--columns entry {part!r} has no '='", expected="canonical=source, e.g. chosen=response_a")
            k, v = part.split("=", 1)
            items.append((k.strip(), v.strip()))
    out = {}
    for k, v in items:
        if k not in CANONICAL_KEYS + ID_KEYS:
            raise ConfigError(f"--columns maps unknown name {k!r}", expected=f"one of {', '.join(CANONICAL_KEYS)}")
        out[k] = v
    return out


def apply_columns(rec: dict[str, Any], columns: dict[str, str] | None) -> dict[str, Any]:
    """The record with canonical names added for mapped source columns."""
    return {**rec, **{k: rec[v] for k, v in columns.items() if v in rec}} if columns else rec


def detect_format(rec: dict[str, Any], columns: dict[str, str] | None = None) -> str | None:
    """Guess the format from one parsed record (None if it looks like none)."""
    rec = apply_columns(rec, columns)
    if "chosen_input_ids" in rec or "rejected_input_ids" in rec:
        return "pretokenized"
    if "response_a" in rec and "response_b" in rec and "label" in rec:
        return "pairwise_label"
    if "chosen" in rec and "rejected" in rec:
        c = rec["chosen"]
        if "prompt" in rec:
            return "conversational" if isinstance(c, list) else "standard"
        if isinstance(c, list):
            return "implicit_conversational"
        if isinstance(c, str) and (HH_ASSISTANT in c or HH_HUMAN in c):
            return "implicit_hh"
        return "implicit_hh" if isinstance(c, str) else None
    return None


def row_format(rec: dict[str, Any], file_format: str, columns: dict[str, str] | None = None) -> str:
    """The format to normalise one record with, when the file's format was detected (not forced).

    Files can mix formats (e.g. HH rows followed by rows with an explicit prompt). A row keeps the
    file's format unless its own shape says otherwise with certainty: an explicit prompt, token ids,
    a pairwise label, message lists, or HH turn markers. A row that merely lacks a field keeps the
    file's format, so it is reported as missing that field rather than re-read in another format.
    """
    own = detect_format(rec, columns)
    if own is None or own == file_format:
        return file_format
    if own == "implicit_hh":
        c = apply_columns(rec, columns).get("chosen")
        if not (isinstance(c, str) and (HH_ASSISTANT in c or HH_HUMAN in c)):
            return file_format
    return own


def json_type(v: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return {"dict": "an object", "list": "an array", "str": "a string"}.get(type(v).__name__, type(v).__name__)


def _text(rec: dict[str, Any], key: str) -> str:
    if key not in rec:
        raise Malformed(f"missing field {key!r}; fix: add it or map it with --columns {key}=SOURCE_COLUMN", key)
    v = rec[key]
    if isinstance(v, (bytes, bytearray)):  # a Python source's bytes: text when they are UTF-8
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Malformed(f"field {key!r} holds bytes that are not UTF-8 (0x{v[exc.start]:02x} at byte {exc.start}), "
                            "expected text; fix: decode that column's bytes in the script that built the data "
                            "(e.g. b.decode('latin-1'))", key) from None
    if not isinstance(v, str):
        raise Malformed(f"field {key!r} is {json_type(v)} ({str(v)[:40]!r}), expected a string", key)
    return v


def _messages(value: Any, key: str) -> Messages:
    if isinstance(value, dict):  # a single message
        value = [value]
    if not isinstance(value, list):
        raise Malformed(f"field {key!r} is {json_type(value)}, expected a list of {{role, content}} messages", key)
    out: Messages = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise Malformed(f"{key}[{i}] is {json_type(m)}, expected a {{role, content}} object", key)
        if "role" in m and "content" in m:
            role, content = m["role"], m["content"]
        elif "from" in m and "value" in m:  # ShareGPT
            role, content = SHAREGPT_ROLES.get(str(m["from"]).lower(), str(m["from"])), m["value"]
        else:
            raise Malformed(f"{key}[{i}] has keys {sorted(m)}, expected role/content (or ShareGPT from/value)", key)
        if not isinstance(role, str):
            raise Malformed(f"{key}[{i}].role is {json_type(role)}, expected a string", key)
        if role not in ROLES:
            close = difflib.get_close_matches(role.lower(), ROLES, n=1, cutoff=0.6)
            raise Malformed(f"{key}[{i}] has unknown role {role[:40]!r}, expected one of {', '.join(ROLES)}"
                            + (f" (did you mean {close[0]!r}?)" if close else "")
                            + "; fix: rename the role, or map ShareGPT 'from' values to these", key)
        if not isinstance(content, str):
            raise Malformed(f"{key}[{i}].content is {json_type(content)}, expected a string", key)
        msg = {"role": role, "content": content}
        out.append(msg)
    return out


def _responses(msgs: Messages, key: str) -> Messages:
    """A response's turns are the assistant's: a user, system or tool turn there is misplaced."""
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            raise Malformed(f"{key} turn {i} has role {m['role']!r} where the response (assistant turns) belongs; "
                            "fix: move that turn into the prompt, or correct its role", key)
    if not msgs:
        raise Malformed(f"{key} holds no assistant turn; fix: end the dialogue with the assistant's response", key)
    return msgs


def messages_text(msgs: Messages) -> str:
    """Plain-text view of messages (hashing, similarity, embeddings): contents joined by blank lines."""
    return "\n\n".join(m["content"] for m in msgs)


def common_prefix_chars(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (binary search on C-level slice compares)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def split_hh(chosen: str, rejected: str) -> tuple[str, str, str, str | None]:
    """Split HH dialogue strings into (prompt, chosen response, rejected response, mismatch note).

    The prompt is the longest shared prefix that ends with ``"\\n\\nAssistant:"``. Unlike a
    character-wise common prefix (TRL's ``extract_prompt``, off by one for identical and prefix
    pairs), identical pairs stay identical and the cut never falls inside a word. A response that
    still holds a ``"\\n\\nHuman:"`` turn means the two dialogues differ before the last turn.
    """
    k = common_prefix_chars(chosen, rejected)
    idx = chosen.rfind(HH_ASSISTANT, 0, k)
    prompt = chosen[: idx + len(HH_ASSISTANT)] if idx >= 0 else ""
    c, r = chosen[len(prompt):], rejected[len(prompt):]
    note = None
    own_c, own_r = chosen[: chosen.rfind(HH_ASSISTANT) + 1], rejected[: rejected.rfind(HH_ASSISTANT) + 1]
    if own_c != own_r:  # each side's own history (up to its last assistant turn) differs
        note = hh_mismatch(chosen, rejected, c, r)[1]
    return prompt, c, r, note


def split_implicit_messages(chosen: Messages, rejected: Messages) -> tuple[Messages, Messages, Messages, str | None]:
    """Shared history = messages before the last assistant turn of each side (which must agree)."""

    def last_assistant(ms: Messages) -> int:
        for i in range(len(ms) - 1, -1, -1):
            if ms[i]["role"] == "assistant":
                return i
        return len(ms)

    ic, ir = last_assistant(chosen), last_assistant(rejected)
    note = None
    if chosen[:ic] != rejected[:ir]:
        note = messages_mismatch(chosen[:ic], rejected[:ir])[1]
    return chosen[:ic], chosen[ic:], rejected[ir:], note


def _ids(rec: dict[str, Any], key: str, required: bool) -> list[int] | None:
    if key not in rec or rec[key] is None:
        if required:
            raise Malformed(f"missing field {key!r} for pre-tokenized data", key)
        return None
    v = rec[key]
    if hasattr(v, "tolist"):
        v = v.tolist()
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise Malformed(f"field {key!r} must be a list of integers", key.split("_")[0])
    return v


def _label_choice(label: Any, col_a: str, col_b: str) -> bool:
    """True if response_a is the preferred one."""
    if isinstance(label, bool):
        raise Malformed(f"label is a boolean ({label}); expected 0/1 or 'a'/'b'", "label")
    s = str(label).strip().lower() if isinstance(label, (str, int)) else None
    if s in ("0", "a", "response_a", col_a.lower()):
        return True
    if s in ("1", "b", "response_b", col_b.lower()):
        return False
    raise Malformed(f"label {label!r} names neither response", "label")


def _implicit_hh(row: int, rec: dict[str, Any]) -> Pair:
    """An HH dialogue pair, with ``prompt_mismatch``'s notes: the side or turn where the histories part, or a
    reply that writes a speaker label (a mild finding)."""
    chosen, rejected = _text(rec, "chosen"), _text(rec, "rejected")
    prompt, c, r, note = split_hh(chosen, rejected)
    pair = Pair(row, "implicit_hh", prompt, c, r)
    if note:
        pair.notes["prompt_mismatch"] = note
        pair.notes["prompt_mismatch_side"] = hh_mismatch(chosen, rejected, c, r)[0] or ""
    elif (marker := hh_role_marker(c, r)) is not None:
        pair.notes["prompt_mismatch_side"], pair.notes["prompt_mismatch"] = marker
        pair.notes["prompt_mismatch_mild"] = "a speaker label in a reply, not a different history"
    return pair


def normalise(row: int, rec: dict[str, Any], fmt: str, columns: dict[str, str] | None = None) -> Pair:
    """Turn one parsed record into a canonical Pair (raises Malformed)."""
    if columns:
        rec = apply_columns(rec, columns)
        missing = [v for k, v in columns.items() if v not in rec]
        if missing:
            raise Malformed(f"mapped column {missing[0]!r} is missing", missing[0])
    if fmt == "standard":
        return Pair(row, fmt, _text(rec, "prompt"), _text(rec, "chosen"), _text(rec, "rejected"))
    if fmt == "conversational":
        pm = _messages(rec.get("prompt"), "prompt") if not isinstance(rec.get("prompt"), str) else \
            [{"role": "user", "content": rec["prompt"]}]
        cm, rm = _messages(rec.get("chosen"), "chosen"), _messages(rec.get("rejected"), "rejected")
        _responses(cm, "chosen"), _responses(rm, "rejected")
        return Pair(row, fmt, messages_text(pm), messages_text(cm), messages_text(rm), pm, cm, rm)
    if fmt == "implicit_conversational":
        c, r = _messages(rec.get("chosen"), "chosen"), _messages(rec.get("rejected"), "rejected")
        pm, cm, rm, note = split_implicit_messages(c, r)
        _responses(cm, "chosen"), _responses(rm, "rejected")
        pair = Pair(row, fmt, messages_text(pm), messages_text(cm), messages_text(rm), pm, cm, rm)
        if note:
            pair.notes["prompt_mismatch"] = note
            pair.notes["prompt_mismatch_side"] = messages_mismatch(pm, r[:len(r) - len(rm)])[0] or ""
        return pair
    if fmt == "implicit_hh":
        return _implicit_hh(row, rec)
    if fmt == "pairwise_label":
        a_col, b_col = (columns or {}).get("response_a", "response_a"), (columns or {}).get("response_b", "response_b")
        a_first = _label_choice(rec.get("label"), a_col, b_col)
        if isinstance(rec.get("response_a"), list):
            sub = {"prompt": rec.get("prompt"), "chosen": rec["response_a"], "rejected": rec["response_b"]}
            if not a_first:
                sub["chosen"], sub["rejected"] = sub["rejected"], sub["chosen"]
            return normalise(row, sub, "conversational")
        prompt, a, b = _text(rec, "prompt"), _text(rec, "response_a"), _text(rec, "response_b")
        return Pair(row, fmt, prompt, *((a, b) if a_first else (b, a)))
    if fmt == "pretokenized":
        ids = {}
        for key in ID_KEYS:
            v = _ids(rec, key, key in ("chosen_input_ids", "rejected_input_ids"))
            if v is not None:
                ids[key] = v
        return Pair(row, fmt, None, None, None, ids=ids)
    raise ConfigError(f"unknown format {fmt!r}", expected=", ".join(FORMATS))


def to_record(pair: Pair) -> dict[str, Any]:
    """The TRL-style record of a pair (explicit prompt); ``normalise`` of it gives the pair back."""
    if pair.pretokenized:
        return dict(pair.ids or {})
    if pair.conversational:
        return {"prompt": pair.prompt_messages, "chosen": pair.chosen_messages, "rejected": pair.rejected_messages}
    return {"prompt": pair.prompt, "chosen": pair.chosen, "rejected": pair.rejected}


def record_format(pair: Pair) -> str:
    """The format name of ``to_record(pair)``."""
    if pair.pretokenized:
        return "pretokenized"
    return "conversational" if pair.conversational else "standard"
