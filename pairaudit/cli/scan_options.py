"""The options of `pairaudit scan`, declared once each (name, metavar, help), as typer ``Annotated`` types that
:func:`pairaudit.cli.scan.scan` uses; ``pairaudit.scan`` takes the same names as keywords
(tests/test_api_parity.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pairaudit.options import CHECKS

SourceArg = Annotated[str, typer.Argument(metavar="SOURCE", help="A .jsonl / .jsonl.gz / .json / .parquet file or "
    "folder, a save_to_disk folder, or a Hugging Face dataset id.")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", metavar="DIR",
    help="Output folder (created; files replaced atomically).")]
FormatOpt = Annotated[str | None, typer.Option("--format", metavar="FORMAT", help="Force the format: standard, "
    "conversational, implicit_conversational, implicit_hh, pretokenized or pairwise_label.")]
ColumnsOpt = Annotated[str | None, typer.Option("--columns", metavar="NAME=COL,...", help="Map source columns to "
    "canonical names: comma-separated NAME=COLUMN pairs, e.g. chosen=a,rejected=b.")]
SplitOpt = Annotated[str | None, typer.Option("--split", metavar="SPLIT", help="Split(s) of a dataset dict / "
    "hub dataset: a name, 'all', or a list 'train,test' (or 'train+test') scanned into one output "
    "with split/split_row columns and the split_leakage check. Default: train if present.")]
SubsetOpt = Annotated[str | None, typer.Option(metavar="NAME", help="Hub dataset configuration (subset).")]
TokenizerOpt = Annotated[str | None, typer.Option(metavar="PATH|ID", help="Training tokenizer: HF folder or id, "
    "or a .gguf file. Default: the bundled SmolLM2-135M-Instruct (lengths are then in its "
    "tokens, not your model's).")]
TrainerOpt = Annotated[str, typer.Option(metavar="NAME", help="Trainer whose tokenization, truncation and row "
    "filters to reproduce: trl (the installed TRL; the newest known if none), trl==VERSION, "
    "or a profile: trl-1.14.2, trl-1.9, trl-0.29, trl-0.27.2 (= trl-legacy), trl-0.20.")]
MaxLengthOpt = Annotated[str | None, typer.Option(metavar="N|none", help="Trainer max_length (prompt + "
    "completion); none = no limit. Default: the trainer's (TRL: 1024).")]
MaxPromptLengthOpt = Annotated[str | None, typer.Option(metavar="N|none", help="Trainer max_prompt_length "
    "(TRL < 0.29 only; its default 512).")]
MaxCompletionLengthOpt = Annotated[str | None, typer.Option(metavar="N|none", help="Trainer "
    "max_completion_length (TRL < 0.29 only; default none).")]
TruncationModeOpt = Annotated[str | None, typer.Option(metavar="MODE", help="keep_start or keep_end: which end "
    "of prompt + completion max_length keeps. Default: the trainer's (TRL >= 0.29: "
    "keep_start; older: keep_end).")]
OnlyOpt = Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Run only these checks (comma-separated "
    "or repeated; see `pairaudit checks`).")]
SkipOpt = Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Do not run these checks.")]
DropOpt = Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Drop rows with findings of these "
    "checks.")]
FlagOpt = Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Only flag (keep) rows with findings of "
    "these checks.")]
FlipOpt = Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Keep rows with findings of these checks "
    "but swap chosen and rejected in the cleaned output (e.g. likely_flipped).")]
ExplicitPromptOpt = Annotated[bool, typer.Option("--explicit-prompt", metavar="", help="Implicit-prompt data: "
    "write a prompt column (up to the last assistant turn) into the cleaned output, "
    "so the trainer does not split at the responses' common prefix (see "
    "prefix_pair, split_word).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", metavar="CHECK.PARAM=VALUE", help="Threshold override, "
    "e.g. length_outlier.max_z=4 (see `pairaudit checks --verbose`).")]
ConfigOpt = Annotated[Path | None, typer.Option(metavar="FILE", help="TOML/JSON config file; command-line flags "
    "win over it.")]
EmbedderOpt = Annotated[str | None, typer.Option(metavar="PATH|ID", help="sentence-transformers model for "
    "near-duplicates. Default: the bundled all-MiniLM-L6-v2.")]
EmbedBatchSizeOpt = Annotated[int, typer.Option(metavar="N", help="Embedding batch size.")]
FastOpt = Annotated[bool, typer.Option("--fast", help="Near duplicates from the static (model2vec) embedding "
    "model alone: no transformer is loaded (same as --embed-mode static).")]
EmbedModeOpt = Annotated[str, typer.Option(metavar="MODE", help="Near duplicates: auto (= hybrid: a static model "
    "distilled from the embedder finds candidates, the embedder decides), static, or "
    "transformer (the embedder embeds every text).")]
PrecisionOpt = Annotated[str, typer.Option("--precision", metavar="PRECISION", help="auto, fp32, bf16 or fp16 (auto: models "
    "bf16 on CUDA and bf16-capable CPUs; the embedder fp32 on CUDA).")]
ReferenceOpt = Annotated[str | None, typer.Option(metavar="PATH|ID", help="Reference causal LM (folder, id or "
    ".gguf) whose log-probs and hidden states join likely_flipped (on CPU only when given; on "
    "CUDA the bundled SmolLM2 joins by default). 'default' = the bundled SmolLM2.")]
RewardModelOpt = Annotated[str | None, typer.Option(metavar="PATH|ID", help="Sequence-classification reward "
    "model.")]
PolicyOpt = Annotated[str | None, typer.Option(metavar="PATH", help="Policy checkpoint: real DPO logits for "
    "dpo_overflow_risk.")]
BetaOpt = Annotated[float, typer.Option(metavar="FLOAT", help="DPO beta.")]
ReferenceMaxRowsOpt = Annotated[int | None, typer.Option(metavar="N", help="Score only the first N rows (in "
    "input order) with the reference model; later rows get no flip score.")]
DeviceOpt = Annotated[str, typer.Option("--device", metavar="DEVICE", help="auto, cpu, cuda or cuda:N.")]
DecisionsOpt = Annotated[Path | None, typer.Option(metavar="FILE", help="Review decisions file to apply "
    "(OUT/decisions.jsonl is always applied).")]
FailOnOpt = Annotated[list[str] | None, typer.Option(metavar="CHECK>RATE", help="Exit 3 when a check's row rate "
    "exceeds a limit, e.g. 'duplicate_pair>0.05' or 'likely_flipped>10%'.")]
AllowEmptyOpt = Annotated[bool, typer.Option("--allow-empty", metavar="", help="Exit 0 even when no record could "
    "be read or every record was dropped (status \"empty\", exit 5 otherwise).")]
BatchSizeOpt = Annotated[int, typer.Option(metavar="N", help="Rows per streaming batch.")]
WorkersOpt = Annotated[int | None, typer.Option(metavar="N", help="Processes that read, check and embed the "
    "batches (local engine; default: one per CPU; 1: all in this process; inputs under "
    "10,000 rows run in this process).")]
EngineOpt = Annotated[str, typer.Option("--engine", metavar="ENGINE", help="local, or ray: the same stages spread over a Ray "
    "cluster (docs/scale.md).")]
RayAddressOpt = Annotated[str | None, typer.Option(metavar="ADDRESS", help="Ray cluster address (default: "
    "start a local Ray).")]
RayWorkersOpt = Annotated[int | None, typer.Option(metavar="N", help="Ray actors (default: one per cluster "
    "CPU).")]
RayShardsOpt = Annotated[int | None, typer.Option(metavar="N", help="Ray: shards the source is cut into "
    "(default: two per actor, more for a large source: at most 40 MB a shard; an actor that finishes early "
    "reads more).")]
TrustRemoteCodeOpt = Annotated[bool, typer.Option("--trust-remote-code", metavar="", help="Allow custom model code (off "
    "by default).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", metavar="", help="Silent: no progress, messages or "
    "summary (errors and failed checks are still reported).")]
