"""Hostile files pairaudit reads back, for scripts/fuzz_inputs.py (issue 23): config files, decisions
files, damaged report.json, training-run folders for `pairaudit trace`, planted output folders and
conversational rows with random roles. Each case is (surface, name, argv, allowed exit codes, records,
out folder); fuzz_inputs runs it and checks: no traceback, an allowed exit code, every record in exactly
one of clean/dropped, and nothing outside --out (a sibling "victim" folder, and any user file planted in
--out) touched."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HOSTILE = [None, 0, -1, 1, 7, 2.5, 1e400, float("nan"), True, False, "", "false", "7", "x" * 300, [], [1], {},
           {"a": 1}, "\x1b[31m", "\u202e", 10 ** 30]
OPTIONS = ["max_length", "batch_size", "trainer", "tokenizer", "only", "skip", "drop", "flag", "beta", "format",
           "columns", "truncation_mode", "precision", "embed_mode", "reference_max_rows", "split"]
CHECKS = ["identical_pair", "near_identical_pair", "length_outlier", "likely_flipped", "too_long", "duplicate_pair"]
THRESH = {"near_identical_pair": ["min_char_ratio", "max_token_edits"], "length_outlier": ["max_z", "min_tokens"],
          "likely_flipped": ["folds", "threshold"]}


@dataclass
class Case:
    surface: str
    name: str
    argv: list[str]
    allowed: set[int]
    records: int = -1  # records the outputs must account for (-1: not checked)
    out: Path | None = None
    protected: dict[str, bytes] = field(default_factory=dict)  # user files in --out that must not change
    planted: list[str] = field(default_factory=list)  # characters that must not reach the terminal raw
    limit: int | None = None  # RLIMIT_FSIZE while the case runs (fuzz_edges)


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    return word[:i] + rng.choice("abcdez_") + word[i + 1:] if rng.random() < 0.5 else word[:i] + word[i + 1:]


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "inf" if v == float("inf") else "nan" if v != v else repr(v)
    if isinstance(v, (int, str)):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    return '"none"'


def config_cases(work: Path, src: Path, rng: random.Random, n: int) -> list[Case]:
    out = []
    for k in range(n):
        top: dict[str, object] = {"only": ["identical_pair"]}
        checks: dict[str, dict[str, object]] = {}
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(6)
            if op == 0:
                top[rng.choice(OPTIONS)] = rng.choice(HOSTILE)
            elif op == 1:
                top[typo(rng.choice(OPTIONS), rng)] = 1
            elif op == 2:
                checks.setdefault(rng.choice([*CHECKS, typo(rng.choice(CHECKS), rng), "nosuch"]), {})["action"] = \
                    rng.choice(["drop", "flag", "remove", 1, None, "DROP"])
            elif op == 3:
                checks.setdefault(rng.choice(CHECKS), {})["enabled"] = rng.choice([False, True, "false", 0, "no"])
            elif op == 4:
                name = rng.choice(sorted(THRESH))
                key = rng.choice(THRESH[name])
                checks.setdefault(name, {})[typo(key, rng) if rng.random() < 0.3 else key] = rng.choice(HOSTILE)
            else:
                top["only"] = rng.choice(["identical_pair", "identical_pair,too_long", "nosuch", ["x", 1], 3])
        path = work / f"cfg-{k}.{'json' if k % 3 == 0 else 'toml'}"
        if k % 3 == 0:
            path.write_text(json.dumps({**top, "checks": checks}, default=str), encoding="utf-8")
        else:
            lines = [f"{key} = {toml_value(v)}" for key, v in top.items()]
            for name, settings in checks.items():
                lines.append(f"[checks.{json.dumps(name)}]")
                lines += [f"{key} = {toml_value(v)}" for key, v in settings.items()]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if k % 25 == 24:
            path = work  # --config on a folder
        out.append(Case("config", f"config {k}", ["scan", str(src), "--config", str(path)], {0, 2, 4, 5}, 5))
    return out


def decisions_cases(work: Path, src: Path, rng: random.Random, n: int) -> list[Case]:
    bad_rows = [float("inf"), 3.7, True, "2", -1, None, [1], 1e400]
    out = []
    for k in range(n):
        lines, hostile = [], False
        for _ in range(rng.randint(1, 5)):
            op = rng.randrange(5)
            row: object = rng.randrange(5)
            dec: object = rng.choice(["keep", "drop", "flip"])
            rec: dict[str, object] = {"row": row, "decision": dec}
            if op == 1:
                rec["row"] = rng.choice(bad_rows)
                hostile = True
            elif op == 2:
                rec["decision"] = rng.choice(["Keep", "remove", 1, None])
                hostile = True
            elif op == 3:
                rec[typo("note", rng)] = "x"
                hostile = True
            lines.append(json.dumps(rec) if op != 4 else rng.choice(["{oops", "[1, 2]", '"s"']))
            hostile |= op == 4
        path = work / f"dec-{k}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append(Case("decisions", f"decisions {k}", ["scan", str(src), "--decisions", str(path)],
                        {2} if hostile else {0, 5}, 5))
    out.append(Case("decisions", "decisions folder", ["scan", str(src), "--decisions", str(work)], {2}))
    return out


def mutate_json(obj: object, rng: random.Random) -> object:
    """One random change somewhere in a JSON document (delete, retype, or replace a value)."""
    if isinstance(obj, dict) and obj:
        key = rng.choice(sorted(obj))
        if rng.random() < 0.35:
            return {k: v for k, v in obj.items() if k != key} if rng.random() < 0.5 else {**obj, key: rng.choice(HOSTILE)}
        return {**obj, key: mutate_json(obj[key], rng)}
    if isinstance(obj, list) and obj:
        i = rng.randrange(len(obj))
        return [*obj[:i], mutate_json(obj[i], rng), *obj[i + 1:]]
    return rng.choice(HOSTILE)


def report_cases(work: Path, scanned: Path, rng: random.Random, n: int) -> list[tuple[Case, str]]:
    """(case, text for report.json): the runner writes the text into a copy of a scanned folder."""
    real = json.loads((scanned / "report.json").read_text(encoding="utf-8"))
    out = []
    for k in range(n):
        doc = real
        for _ in range(rng.randint(1, 3)):
            doc = mutate_json(doc, rng)
        text = json.dumps(doc, default=str)
        if k % 7 == 0:
            text = rng.choice(["{not json", "[]", "{}", text[: len(text) // 2], '"x"'])
        cmd = rng.choice([["report"], ["show", None, "0"], ["apply"]])
        out.append((Case("report.json", f"report.json {k} ({cmd[0]})", cmd, {0, 2, 4, 5}), text))
    return out


STATE = {"global_step": 6, "max_steps": 10, "train_batch_size": 2, "logging_steps": 1, "num_train_epochs": 1,
         "log_history": [{"step": 1, "loss": 1.0, "grad_norm": 1.0}, {"step": 2, "loss": 1.1, "grad_norm": 1.2},
                         {"step": 3, "loss": 1.0, "grad_norm": float("nan")}]}
ARGS = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "seed": 42, "max_steps": 10,
        "logging_steps": 1}


def trace_cases(work: Path, data: Path, rng: random.Random, n: int) -> list[Case]:
    out = []
    for k in range(n):
        run = work / f"run-{k}"
        run.mkdir()
        state, args = STATE, ARGS
        for _ in range(rng.randint(1, 2)):
            if rng.random() < 0.6:
                state = mutate_json(state, rng)
            else:
                args = mutate_json(args, rng)
        (run / "trainer_state.json").write_text(json.dumps(state, default=str))
        (run / "training_args.json").write_text(json.dumps(args, default=str))
        extra = ["--set", f"{rng.choice(['seed', 'max_steps', 'world_size', typo('seed', rng)])}="
                 f"{rng.choice(['Infinity', '3', '-1', 'x', '1e400'])}"] if k % 4 == 0 else []
        out.append(Case("trace", f"trace run {k}", ["trace", str(run), "--data", str(data), *extra], {0, 2, 4, 6}))
    return out


PLANTS = ["current absolute", "current relative", "meta link", "output link outside", "user file at output",
          "edited output", "stray gen link", "manifest garbage", "lock folder", "tmp link", "report.html link",
          "real clean folder"]


def plant(out: Path, victim: Path, what: str, rng: random.Random) -> dict[str, bytes]:
    """Plant something hostile in a scanned --out; returns the user files there that must not change."""
    meta = out / ".pairaudit"
    if what == "current absolute":
        (meta / "current").unlink()
        os.symlink(victim, meta / "current")
    elif what == "current relative":
        (meta / "current").unlink()
        os.symlink(os.path.relpath(victim, meta), meta / "current")
    elif what == "meta link":
        shutil.rmtree(meta)
        for name in os.listdir(out):
            if (out / name).is_symlink():
                os.unlink(out / name)
        os.symlink(victim, meta)
    elif what == "output link outside":
        (out / "report.json").unlink()
        os.symlink(victim / "precious.txt", out / "report.json")
    elif what == "user file at output":
        (out / "clean.jsonl").unlink()
        (out / "clean.jsonl").write_text('{"mine": 1}\n')
        return {"clean.jsonl": b'{"mine": 1}\n'}
    elif what == "edited output":
        with open(out / "clean.jsonl", "a") as fh:
            fh.write('{"mine": 2}\n')
        return {"clean.jsonl": (out / "clean.jsonl").read_bytes()}
    elif what == "stray gen link":
        os.symlink(victim, meta / "gen-evil")
    elif what == "manifest garbage":
        (meta / "manifest.json").write_bytes(rng.choice([b"\xff\x00", b"[]", b'{"names": 5}', b'{"generation": 1}']))
    elif what == "lock folder":
        (meta / "lock").unlink()
        (meta / "lock").mkdir()
    elif what == "tmp link":
        os.symlink(victim / "precious.txt", meta / rng.choice(["manifest.json.tmp", "current.tmp", ".current"]))
    elif what == "report.html link":
        (out / "report.html").unlink()
        os.symlink(victim / "precious.txt", out / "report.html")
    elif what == "real clean folder":
        (out / "clean.jsonl").unlink()
        (out / "clean.jsonl").mkdir()
        (out / "clean.jsonl" / "notes.txt").write_text("mine\n")
        return {"clean.jsonl/notes.txt": b"mine\n"}
    return {}


def role_rows(rng: random.Random, n: int) -> list[str]:
    bad = ["sysadmin", "", "USER", "Assistant", "human", "gpt", "tool", 7, None]
    rows = []

    def msg(role: object) -> dict[str, object]:
        content = rng.choice(["hi there", "ok \x1b[2J", "fine"]) if rng.random() < 0.95 else rng.choice(["", 5])
        return {"role": role, "content": content} if rng.random() < 0.9 else {"from": role, "value": content}

    def role(good: str) -> object:
        return good if rng.random() < 0.85 else rng.choice(bad)

    for k in range(n):
        prompt = [msg(role("system"))] if rng.random() < 0.3 else []
        prompt += [msg(role("user")) for _ in range(rng.randint(1, 2))]
        rec = {"prompt": prompt, "chosen": [msg(role("assistant"))],
               "rejected": [msg(role("assistant")) for _ in range(rng.randint(1, 2))]}
        rec["chosen"][0]["content" if "content" in rec["chosen"][0] else "value"] = f"answer {k}"
        if rng.random() < 0.3:
            rec.pop("prompt")
        rows.append(json.dumps(rec))
    return rows


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and not p.is_symlink()}


Make = Callable[[], None]
