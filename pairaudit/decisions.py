"""Review decisions (keep / drop / flip) recorded in ``OUT/decisions.jsonl``.

One JSON object per line: ``{"row", "decision", "note", "pair_hash", "reviewer", "time", "action"}``; later
lines win. The file is an append-only log of actions: ``action`` numbers one call of one reviewer (a
single decision, or every line of one bulk decision). A line ``"decision": "undo"`` with an ``action``
takes back exactly that action's decision of its row (the one before it then holds again); an undo line
without ``action`` (files written before actions were numbered) takes back the row's latest decision. A decision whose ``pair_hash`` no longer matches the row (the source changed) is ignored and
reported. :func:`merge_decisions` joins two reviewers' files and lists the rows they disagree on.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pairaudit.errors import InputError

DECISIONS = ("keep", "drop", "flip")
UNDO = "undo"
KEYS = ("row", "decision", "note", "pair_hash", "reviewer", "time", "action")
EXAMPLE = '{"row": 12, "decision": "keep|drop|flip", "note": "..."}'


@dataclass(frozen=True)
class Decision:
    row: int
    decision: str
    note: str = ""
    pair_hash: str | None = None
    reviewer: str = ""
    time: str = ""  # UTC, ISO 8601, seconds
    action: int | None = None  # the reviewer's action this line belongs to (an undo line: the action undone)

    def line(self) -> dict:
        """The JSON object written for this decision (``action`` only when numbered)."""
        d = asdict(self)
        if d["action"] is None:
            del d["action"]
        return d


def row_number(value: object, where: str = "row") -> int:
    """A row number as the decisions file and the Python API both accept it: a whole number >= 0 (a numpy
    integer too); never a bool, a float (3.7, 8.0, nan, inf) or a string ("6"). A ConfigError otherwise."""
    from pairaudit import schema
    from pairaudit.errors import ConfigError

    if type(value).__module__ == "numpy" and type(value).__name__.startswith(("int", "uint")):
        value = int(value)  # type: ignore[call-overload]
    try:
        return schema.integer(value, where, lo=0)
    except ConfigError as exc:
        raise ConfigError(exc.what, expected=exc.expected,
                          fix="pass the row number as findings.parquet's `row` column holds it: an int "
                              "(e.g. review.findings()['row'][0]); a decisions file line: {\"row\": 12, ...}") from None


def now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def read_log(path: str | os.PathLike[str]) -> list[Decision]:
    """Every line of a decisions file in order, undo lines included (blank lines skipped); each line is
    validated (types, known keys, rows >= 0)."""
    from pairaudit import schema
    from pairaudit.errors import ConfigError

    p = Path(path)
    out: list[Decision] = []
    if not os.path.lexists(p):
        return out
    if p.is_dir():
        raise InputError(f"decisions file {p} is a folder", fix="pass the decisions.jsonl file itself")
    try:
        with open(p, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{p} line {n}"
                try:
                    d = schema.mapping(json.loads(line), where)
                    schema.check_keys(d, KEYS, where)
                    if "row" not in d or "decision" not in d:
                        raise ConfigError(f"{where} has no {'row' if 'row' not in d else 'decision'}")
                    note, pair_hash = d.get("note", ""), d.get("pair_hash")
                    text = {k: d.get(k) or "" for k in ("reviewer", "time")}
                    action = None if d.get("action") is None else schema.integer(d["action"], f"{where}: action", lo=0)
                    dec = Decision(row_number(d["row"], f"{where}: row"),
                                   schema.string(d["decision"], f"{where}: decision", (*DECISIONS, UNDO)),
                                   note if isinstance(note, str) else schema.string(note, f"{where}: note"),
                                   None if pair_hash is None else schema.string(pair_hash, f"{where}: pair_hash"),
                                   *(v if isinstance(v, str) else schema.string(v, f"{where}: {k}")
                                     for k, v in text.items()), action)
                except ValueError as exc:
                    raise InputError(f"{where} is not JSON: {exc}", expected=EXAMPLE) from exc
                except ConfigError as exc:
                    raise InputError(exc.what, expected=exc.expected or EXAMPLE, fix=exc.fix) from exc
                out.append(dec)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"decisions file {p} cannot be read: {exc}", expected="a UTF-8 JSONL file") from exc
    return out


def final_decisions(log: list[Decision], reviewer: str | None = None) -> dict[int, Decision]:
    """The decision that holds per row after every line of ``log`` (of one ``reviewer``, or all): an undo
    line takes back its action's decision of the row (the latest one when it names no action)."""
    stacks: dict[int, list[Decision]] = {}
    for d in log:
        if reviewer is not None and d.reviewer != reviewer:
            continue
        stack = stacks.setdefault(d.row, [])
        if d.decision != UNDO:
            stack.append(d)
        elif d.action is None:
            if stack:
                stack.pop()
        else:
            _take_back(stack, d)
    return {row: stack[-1] for row, stack in stacks.items() if stack}


def _take_back(stack: list[Decision], undo: Decision) -> None:
    """Remove from one row's decisions the latest one of ``undo``'s reviewer and action."""
    for i in range(len(stack) - 1, -1, -1):
        if (stack[i].reviewer, stack[i].action) == (undo.reviewer, undo.action):
            del stack[i]
            return


def actions(log: list[Decision], reviewer: str) -> list[tuple[int, list[Decision]]]:
    """``reviewer``'s numbered actions not yet undone, oldest first: (action, its decision lines)."""
    undone = {d.action for d in log if d.decision == UNDO and d.reviewer == reviewer and d.action is not None}
    out: dict[int, list[Decision]] = {}
    for d in log:
        if d.decision != UNDO and d.reviewer == reviewer and d.action is not None and d.action not in undone:
            out.setdefault(d.action, []).append(d)
    return list(out.items())  # each action's lines are written at once: first-line order is write order


def next_action(log: list[Decision]) -> int:
    """A number no line of ``log`` uses as its action yet."""
    return 1 + max((d.action for d in log if d.action is not None), default=-1)


def load_decisions(path: str | os.PathLike[str]) -> dict[int, Decision]:
    """The decision that holds per row (later lines win, undo lines take the previous one back)."""
    return final_decisions(read_log(path))


def append_decision(path: str | os.PathLike[str], decision: Decision) -> None:
    """Append one decision line and fsync it (a torn earlier write is closed with a newline first)."""
    append_decisions(path, [decision])


def append_decisions(path: str | os.PathLike[str], decisions: list[Decision]) -> None:
    """Append decision lines with one write and one fsync (a torn earlier write is closed first)."""
    for decision in decisions:
        if decision.decision not in (*DECISIONS, UNDO):
            raise ValueError(f"decision must be one of {DECISIONS}, not {decision.decision!r}")
    if not decisions:
        return
    data = "".join(json.dumps(d.line(), ensure_ascii=False) + "\n" for d in decisions).encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size > 0:
            with open(path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class Merge:
    """What :func:`merge_decisions` did: rows added from the other file, rows both agree on, and the
    conflicts (rows whose decisions differ: left as they were, each listed with both decisions)."""

    added: list[int] = field(default_factory=list)
    agreed: list[int] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)

    def __repr__(self) -> str:
        rows = ", ".join(str(c["row"]) for c in self.conflicts[:20])
        return (f"Merge: {len(self.added)} rows added, {len(self.agreed)} agreed, {len(self.conflicts)} conflicts"
                + (f" (rows {rows}{', ...' if len(self.conflicts) > 20 else ''}: decide them again)"
                   if self.conflicts else ""))


def merge_decisions(mine: str | os.PathLike[str], theirs: str | os.PathLike[str]) -> Merge:
    """Append to ``mine`` the decisions of ``theirs`` for rows ``mine`` has not decided; rows both decided
    the same way are agreed; rows decided differently are conflicts, listed and left as in ``mine``. A
    ``theirs`` that does not exist is an InputError (never "0 rows added")."""
    if not os.path.lexists(theirs):
        raise InputError(f"decisions file {theirs} does not exist: there is nothing to merge",
                         expected="another reviewer's decisions.jsonl (or their Review)",
                         fix="pass the path of their decisions.jsonl, e.g. OUT/decisions.jsonl of their copy")
    mine_final, theirs_final = load_decisions(mine), load_decisions(theirs)
    res, new = Merge(), []
    for row, d in sorted(theirs_final.items()):
        m = mine_final.get(row)
        if m is None:
            res.added.append(row)
            new.append(d)
        elif (m.decision, m.pair_hash) == (d.decision, d.pair_hash):
            res.agreed.append(row)
        else:
            res.conflicts.append({"row": row, "decisions": [
                {"reviewer": x.reviewer, "decision": x.decision, "note": x.note, "time": x.time} for x in (m, d)]})
    append_decisions(mine, _renumbered(new, next_action(read_log(mine))))
    return res


def _renumbered(decisions: list[Decision], first: int) -> list[Decision]:
    """``decisions`` with their actions renumbered from ``first`` on (one number per original action, so
    that merged lines never share an action with the lines already in the file)."""
    from dataclasses import replace

    numbers: dict[tuple[str, int | None, int], int] = {}
    out = []
    for i, d in enumerate(decisions):
        key = (d.reviewer, d.action, i if d.action is None else -1)
        out.append(replace(d, action=numbers.setdefault(key, first + len(numbers))))
    return out


@dataclass
class Resolution:
    """Decisions applied to the scan's drops and flips (``report.json`` ``decisions``)."""

    applied: int = 0
    ignored: list[dict] = field(default_factory=list)


def resolve(decisions: dict[int, Decision], drops: dict[int, list[str]], flips: set[int],
            hashes: dict[int, str]) -> Resolution:
    """Apply review decisions in place to ``drops`` (row -> reasons) and ``flips`` (rows kept reversed).

    ``hashes``: the current ``pair_hash`` of the rows that have a decision. A decision is ignored (and
    listed with its reason) when its row changed since it was recorded, no longer exists, or asks to
    keep a malformed record. ``keep`` removes the row's drops, ``drop`` adds the reason ``review``,
    ``flip`` keeps the row with chosen and rejected swapped.
    """
    res = Resolution()
    for row, dec in sorted(decisions.items()):
        malformed = "malformed_record" in drops.get(row, [])
        if dec.pair_hash and hashes.get(row) != dec.pair_hash:
            res.ignored.append({"row": row, "decision": dec.decision,
                                "reason": "the source row changed since the decision (pair_hash differs)"})
            continue
        if row not in hashes and not malformed:
            res.ignored.append({"row": row, "decision": dec.decision, "reason": "no such row in the source"})
            continue
        if malformed and dec.decision in ("keep", "flip"):
            res.ignored.append({"row": row, "decision": dec.decision,
                                "reason": "malformed records cannot be kept"})
            continue
        res.applied += 1
        if dec.decision == "keep":
            drops.pop(row, None)
            flips.discard(row)
        elif dec.decision == "drop":
            drops.setdefault(row, []).append("review")
            flips.discard(row)
        else:  # flip: the reviewer keeps the pair, reversed
            drops.pop(row, None)
            flips.add(row)
    return res
