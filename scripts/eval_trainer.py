"""How faithfully pairaudit reproduces today's trainer, on the full real data sets.

For each data set, a real TRL ``DPOTrainer`` (the installed TRL, a tiny random model, the bundled SmolLM2
tokenizer, DPOConfig defaults unless --max-length / --truncation-mode say otherwise) prepares the rows;
its collator truncates them. That is the truth: which rows TRL drops, its token ids, and which pairs
become identical after truncation. pairaudit's default profile is compared with it (ids, drops,
truncation_identical), next to pairaudit's earlier defaults (same max_length, max_prompt_length 512,
keep_end), which is what the issue measured as wrong, and next to TRL < 1.9's rules (no row filter).

    PYTHONPATH=. HF_HUB_OFFLINE=1 python scripts/eval_trainer.py [--max-length 1024] [--truncation-mode keep_start]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SETS = {"ultrafeedback-1k": DATA / "ultrafeedback-1k" / "train_clean.jsonl",
        "hh-rlhf-helpful-base-test": DATA / "hh-rlhf" / "helpful-base-test.jsonl"}
TOKEN_CHECKS = ["too_long", "truncation_identical", "dropped_by_trainer"]


def load_rows(path: Path) -> list[dict]:
    keep = ("prompt", "chosen", "rejected")
    with open(path, encoding="utf-8") as fh:
        return [{k: v for k, v in json.loads(line).items() if k in keep} for line in fh if line.strip()]


def trl_truth(rows: list[dict], tok, max_length: int | None, mode: str, tmp: Path) -> dict:
    import torch
    import transformers
    import trl
    from datasets import Dataset

    def tiny() -> transformers.PreTrainedModel:
        torch.manual_seed(0)
        cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                       num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=64)
        return transformers.LlamaForCausalLM(cfg)

    args = trl.DPOConfig(output_dir=str(tmp), bf16=False, report_to="none", use_cpu=True, max_length=max_length,
                         truncation_mode=mode)
    ds = Dataset.from_list([{**r, "row": i} for i, r in enumerate(rows)])
    trainer = trl.DPOTrainer(model=tiny(), ref_model=tiny(), args=args, train_dataset=ds, processing_class=tok)
    prepared = trainer.train_dataset
    collate = trainer.data_collator
    ids, identical = {}, set()
    for start in range(0, len(prepared), 64):
        part = [prepared[i] for i in range(start, min(start + 64, len(prepared)))]
        batch = collate([{k: ex[k] for k in ("prompt_ids", "chosen_ids", "rejected_ids")} for ex in part])
        n = len(part)
        for j, ex in enumerate(part):
            ids[ex["row"]] = (ex["prompt_ids"], ex["chosen_ids"], ex["rejected_ids"])
            seqs = []
            for k in (j, n + j):
                keep = batch["attention_mask"][k].bool()
                seqs.append((batch["input_ids"][k][keep].tolist(), batch["completion_mask"][k][keep].tolist()))
            if seqs[0] == seqs[1] and ex["chosen_ids"] != ex["rejected_ids"]:
                identical.add(ex["row"])
    return {"kept": set(ids), "ids": ids, "identical": identical, "trl": trl.__version__}


def pairaudit_rows(src: Path, out: Path, **kw) -> dict[str, set[int]]:
    import pairaudit

    audit = pairaudit.scan(src, out=out, only=TOKEN_CHECKS + ["identical_pair"], log=lambda m: None, **kw)
    f = audit.findings
    return {c: set(f.filter(f["check"] == c)["row"].to_list()) for c in TOKEN_CHECKS}


def pairaudit_ids(rows: list[dict], tok, spec, max_length: int | None, mode: str) -> dict:
    from pairaudit.io.formats import detect_format, normalise
    from pairaudit.trainer import profiles
    from pairaudit.trainer.tokenizer import DPOTokenizer

    fmt = detect_format(rows[0])
    dtok = DPOTokenizer(tok, spec, trainer=profiles.settings("trl", max_length=max_length, truncation_mode=mode))
    encs = dtok.encode_pairs([normalise(i, r, fmt) for i, r in enumerate(rows)])
    return {i: (e.prompt_ids, e.chosen_ids, e.rejected_ids) for i, e in enumerate(encs)}


def agreement(name: str, truth: set[int], found: set[int]) -> str:
    tp = len(truth & found)
    return (f"  {name:<28} TRL {len(truth):>4}  pairaudit {len(found):>4}  both {tp:>4}  "
            f"missed {len(truth - found):>3}  extra {len(found - truth):>3}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-length", default="1024", help="N or none (DPOConfig.max_length)")
    ap.add_argument("--truncation-mode", default="keep_start")
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    max_length = None if args.max_length.lower() == "none" else int(args.max_length)
    from pairaudit.models.tokenizer import load_tokenizer

    tok, spec = load_tokenizer(None)
    print(f"tokenizer {spec.display}; DPOConfig(max_length={max_length}, truncation_mode={args.truncation_mode!r})")
    for name in args.sets.split(","):
        rows = load_rows(SETS[name])
        with tempfile.TemporaryDirectory() as tmp_s:
            tmp = Path(tmp_s)
            src = tmp / "rows.jsonl"
            src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            t0 = time.perf_counter()
            truth = trl_truth(rows, tok, max_length, args.truncation_mode, tmp / "trl")
            t_trl = time.perf_counter() - t0
            ours = pairaudit_ids(rows, tok, spec, max_length, args.truncation_mode)
            same = sum(ours[i] == truth["ids"][i] for i in truth["kept"])
            new = pairaudit_rows(src, tmp / "new", max_length=max_length, truncation_mode=args.truncation_mode)
            old = pairaudit_rows(src, tmp / "old", trainer="trl-0.20", max_length=max_length, max_prompt_length=512,
                                 truncation_mode="keep_end")
            nofilter = pairaudit_rows(src, tmp / "nofilter", trainer="trl-0.29", max_length=max_length,
                                      truncation_mode=args.truncation_mode)
        dropped = set(range(len(rows))) - truth["kept"]
        print(f"\n{name}: {len(rows)} rows; TRL {truth['trl']} prepared them in {t_trl:.1f} s")
        print(f"  token ids identical to TRL's (prompt, chosen, rejected): {same} of {len(truth['kept'])} kept rows")
        print("  rows TRL drops vs dropped_by_trainer / zero-gradient pairs after TRL's truncation:")
        print(agreement("default profile: dropped", dropped, new["dropped_by_trainer"]))
        print(agreement("default profile: identical", truth["identical"], new["truncation_identical"]))
        print(agreement("old defaults: dropped", dropped, old["dropped_by_trainer"]))
        print(agreement("old defaults: identical", truth["identical"], old["truncation_identical"]))
        print(agreement("TRL < 1.9 rules: identical", dropped, nofilter["truncation_identical"])
              + "   (no filter: those rows keep no completion token)")
        print(f"  too_long rows: default profile {len(new['too_long'])} ({len(new['too_long']) / len(rows):.1%}), "
              f"old defaults {len(old['too_long'])} ({len(old['too_long']) / len(rows):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
