"""Seeded fault planting on real rows, shared by the near-duplicate / repetition / near-identical tests
and ``scripts/bench_dedup.py``.

* ``paraphrase(text)``: a copy with common words swapped for synonyms, one sentence moved or dropped
  (texts of 3+ sentences), a number changed; ``reword_prompt`` rewords the question itself.
* ``light_edit(text)``: case / punctuation / whitespace / one dropped or changed word.
* ``repeat_unit()``: an ordinary-length response that repeats one short unit 25-60 times.
* ``one_word_change(text)``: one content word of a short response replaced.
* ``plant_copies(rows, rng, counts)``: seeded exact copies, paraphrased copies and opposite-label repeats
  (exact and paraphrased) of existing prompt/chosen/rejected rows, appended (data with several pairs per prompt).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
HH = DATA / "hh-rlhf" / "helpful-base-test.jsonl"
UF = DATA / "ultrafeedback-1k" / "train_clean.jsonl"
SEP = "\n\nAssistant:"

SYNONYMS = {
    "help": "assist", "big": "large", "small": "little", "use": "utilize", "make": "create",
    "get": "obtain", "good": "great", "important": "crucial", "also": "additionally", "about": "regarding",
    "buy": "purchase", "start": "begin", "show": "demonstrate", "need": "require", "try": "attempt",
    "many": "numerous", "often": "frequently", "maybe": "perhaps", "quick": "fast", "easy": "simple",
    "different": "various", "way": "method", "find": "locate", "think": "believe", "want": "wish",
    "people": "individuals", "very": "really", "answer": "reply", "question": "query", "idea": "notion",
    "choose": "select", "enough": "sufficient", "however": "nevertheless", "example": "instance",
    "kind": "type", "usually": "typically", "problem": "issue", "hard": "difficult", "store": "shop",
    "car": "vehicle", "house": "home", "job": "occupation", "children": "kids", "begin": "commence",
    "look": "appear", "keep": "retain", "give": "provide", "tell": "inform", "sure": "certain",
    "great": "excellent", "happy": "glad", "best": "finest", "enjoy": "like", "several": "a few",
    "important.": "crucial.", "help.": "assistance.", "food": "meals", "eat": "consume", "water": "H2O",
}
PROMPT_REWORDINGS = (
    (r"^(\s*Human:\s*)(?:Can|Could) you tell me ", r"\1Please explain "),
    (r"^(\s*Human:\s*)How do I ", r"\1What is the way to "),
    (r"^(\s*Human:\s*)How can I ", r"\1What's a good way to "),
    (r"^(\s*Human:\s*)What is ", r"\1Tell me what "),
    (r"^(\s*Human:\s*)What are ", r"\1Tell me what "),
    (r"^(\s*Human:\s*)I want to ", r"\1I'd like to "),
    (r"^(\s*Human:\s*)Do you know ", r"\1Any idea "),
)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _match_case(word: str, new: str) -> str:
    return new.capitalize() if word[:1].isupper() else new


def synonyms(text: str, rng: random.Random, frac: float = 0.6) -> str:
    def sub(m: re.Match) -> str:
        w = m.group(0)
        new = SYNONYMS.get(w.lower())
        return _match_case(w, new) if new and rng.random() < frac else w
    return re.sub(r"[A-Za-z]+\.?", lambda m: sub(m) if m.group(0).lower() in SYNONYMS else
                  re.sub(r"[A-Za-z]+", sub, m.group(0)), text)


def change_number(text: str, rng: random.Random) -> str:
    nums = list(re.finditer(r"\b\d+\b", text))
    if not nums:
        return text
    m = rng.choice(nums)
    v = int(m.group(0))
    return text[:m.start()] + str(v + rng.choice((1, 2, 5, 10))) + text[m.end():]


def short_numbers(text: str) -> list[str] | None:
    """The sorted numbers of a short text (<= 256 bytes once punctuation and spacing are squashed); None for
    a long text or one without numbers. ``paraphrase`` changes a number (``change_number``): in a short
    response that is the answer itself ("1999" -> "1998", "$2.50" -> "$47.50"), another answer, not a copy
    (the independent labels of data/precision/labels.jsonl, multipair)."""
    squashed = " ".join(re.sub(r"[^\w\s]+", " ", text.casefold()).split())
    nums = sorted(re.findall(r"\d+", squashed))
    return nums if nums and len(squashed.encode()) <= 256 else None


def renumbered(copy: tuple[str, ...], source: tuple[str, ...], swapped: bool = False) -> bool:
    """A planted copy whose short chosen or rejected (crosswise when ``swapped``) and its source's counterpart
    both hold numbers, and not the same ones: another answer (``short_numbers``; "water" -> "H2O" is none)."""
    pairs = ((short_numbers(copy[f]), short_numbers(source[3 - f if swapped else f])) for f in (1, 2))
    return any(a is not None and b is not None and a != b for a, b in pairs)


def move_or_drop_sentence(text: str, rng: random.Random) -> str:
    sents = _SENT.split(text.strip())
    small = [k for k, s in enumerate(sents) if len(s) <= 0.25 * len(text)]  # a sentence, not half the answer
    if len(sents) < 3 or not small:
        return text
    i = rng.choice(small)
    s = sents.pop(i)
    if rng.random() < 0.5:  # move it elsewhere
        j = rng.choice([k for k in range(len(sents) + 1) if k != i])
        sents.insert(j, s)
    return " ".join(sents)


def paraphrase(text: str, rng: random.Random) -> str:
    out = move_or_drop_sentence(change_number(synonyms(text, rng), rng), rng)
    if out == text and len(text.split()) >= 8:  # nothing to swap: reword the opening instead
        out = re.sub(r"^(\s*)", r"\1Well, ", text, count=1)
    return out


def reword_prompt(prompt: str, rng: random.Random) -> str:
    """Reword the last human turn (a templated opening where one matches, else synonyms)."""
    k = prompt.rfind("Human:")
    head, last = (prompt[:k], prompt[k:]) if k >= 0 else ("", prompt)
    for pat, rep in PROMPT_REWORDINGS:
        new = re.sub(pat, rep, last, count=1)
        if new != last:
            return head + synonyms(new, rng)
    new = synonyms(last, rng, frac=1.0)
    if new == last:
        new = re.sub(r"(Human:\s*)", r"\1Quick question: ", last, count=1)
    return head + new


def reword_question(prompt: str, rng: random.Random) -> str:
    """``reword_prompt`` for a bare question (no "Human:" turn)."""
    return reword_prompt("Human: " + prompt, rng)[len("Human: "):]


COPY_KINDS = ("exact", "para", "swap", "para_swap")


def plant_copies(rows: list[tuple[str, str, str]], rng: random.Random, counts: dict[str, int]
                 ) -> dict[str, dict[int, int]]:
    """Append to ``rows`` (prompt, chosen, rejected) copies of randomly picked distinct rows: ``exact``
    copies, ``para`` (prompt reworded, both responses paraphrased), ``swap`` (chosen and rejected exchanged:
    an opposite-label repeat) and ``para_swap`` (paraphrased and exchanged), ``counts[kind]`` of each.
    Returns kind -> {planted row: its source row}."""
    picks = rng.sample(range(len(rows)), sum(counts.get(k, 0) for k in COPY_KINDS))
    plant: dict[str, dict[int, int]] = {k: {} for k in COPY_KINDS}
    for kind in COPY_KINDS:
        for o in picks[:counts.get(kind, 0)]:
            p, c, r = rows[o]
            if kind == "para":
                p, c, r = reword_question(p, rng), paraphrase(c, rng), paraphrase(r, rng)
            elif kind == "swap":
                c, r = r, c
            elif kind == "para_swap":
                p, c, r = reword_question(p, rng), paraphrase(r, rng), paraphrase(c, rng)
            rows.append((p, c, r))
            plant[kind][len(rows) - 1] = o
        picks = picks[counts.get(kind, 0):]
    return plant


def light_edit(text: str, kind: str, rng: random.Random) -> str:
    words = text.split(" ")
    content = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z]{3,}", w)]
    if kind in ("drop", "change") and len(content) >= 4:
        i = rng.choice(content)
        if kind == "drop":
            del words[i]
        else:
            words[i] = "thing" if words[i].lower() != "thing" else "stuff"
        return " ".join(words)
    if kind == "punct":
        out = re.sub(r"[.,!?;:]", "", text)
        if out != text:
            return out
    if kind == "space":
        return text.replace(" ", "  ") + " "
    return text.upper() if text.lower() == text else text.lower()


LIGHT_KINDS = ("case", "punct", "space", "drop", "change")
UNITS = ("I'm sorry.", "ha", "I don't know.", "Okay!", "lol", "Yes, yes.", "Thank you.", "no no",
         "I understand.", "hmm", "Sure thing.", "bye", "I see.", "What?", "ok ok ok")


def repeat_unit(rng: random.Random, unit: str | None = None) -> str:
    unit = unit or rng.choice(UNITS)
    return " " + " ".join([unit] * rng.randint(25, 60))


REPLACEMENTS = ("terrible", "wonderful", "never", "always", "purple", "seven", "tomorrow", "quickly")


def one_word_change(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    content = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z]{3,}[.,!?]?", w)]
    i = rng.choice(content)
    w = words[i]
    tail = w[-1] if w[-1] in ".,!?" else ""
    new = rng.choice([r for r in REPLACEMENTS if r != w.rstrip(".,!?").lower()])
    words[i] = _match_case(w, new) + tail
    return " ".join(words)


def parse_hh(line: str) -> tuple[str, str, str]:
    d = json.loads(line)
    c, r = d["chosen"], d["rejected"]
    k = c.rfind(SEP) + len(SEP)
    return c[:k], c[k:], r[r.rfind(SEP) + len(SEP):]


def hh_rows(n: int | None = None) -> list[tuple[str, str, str]]:
    with open(HH, encoding="utf-8") as fh:
        rows = [parse_hh(line) for line in fh if line.strip()]
    return rows[:n] if n else rows


def uf_rows(n: int | None = None) -> list[tuple[str, str, str]]:
    with open(UF, encoding="utf-8") as fh:
        rows = [(d["prompt"], d["chosen"], d["rejected"]) for d in map(json.loads, fh)]
    return rows[:n] if n else rows


def planted_records(seed: int, bad_at: int, n: int = 300) -> list[object]:
    """``n`` real HH rows with 12 planted exact copies and 8 chosen/rejected swaps (``plant_copies`` seeded with
    ``seed``) as JSON records, and one malformed JSONL line inserted at position ``bad_at``."""
    rows = hh_rows(n)
    plant_copies(rows, random.Random(seed), {"exact": 12, "swap": 8})
    recs: list[object] = [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in rows]
    recs.insert(bad_at, "{not json")
    return recs
