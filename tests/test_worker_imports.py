"""A pool worker of a CPU scan imports neither torch nor scikit-learn: the bundled tokenizer's saved conversion
loads without ``AutoTokenizer`` (which imports torch) and the same tokenizer comes back; the flip stage checks
that scikit-learn is installed without importing it; the pool hands its workers the device it resolved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hh-rlhf-helpful-base-500.jsonl"


def _run(code: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cache")
    _save_conversion(folder)
    return folder


def _save_conversion(cache: Path) -> None:
    """The bundled GGUF's tokenizer parsed and saved under ``cache``, in a fresh process (this one may hold the
    tokenizer loaded already, and then saves nothing)."""
    _run(f"from pathlib import Path; from pairaudit.models.tokenizer import load_tokenizer; "
         f"load_tokenizer(None, Path({str(cache)!r})); print('{{}}')")


def test_saved_tokenizer_loads_without_torch_and_equals_autotokenizer(cache: Path) -> None:
    saved = next((cache / "tokenizers").iterdir())
    got = _run(f"""
import json, sys
from pathlib import Path
from pairaudit.models.tokenizer import load_tokenizer
tok, _ = load_tokenizer(None, Path({str(cache)!r}))
texts = ["Hello there!", "naïve café 🙂 <|im_end|> 12345", "\\n\\nHuman: hi\\n\\nAssistant: ok"]
msgs = [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": "hello"}}]
print(json.dumps({{"torch": "torch" in sys.modules, "cls": type(tok).__name__,
                  "ids": [tok(t)["input_ids"] for t in texts], "chat": tok.apply_chat_template(msgs, tokenize=False),
                  "special": [tok.eos_token_id, tok.pad_token_id, tok.bos_token_id, tok.padding_side]}}))
""")
    assert got["torch"] is False
    from transformers import AutoTokenizer

    ref = AutoTokenizer.from_pretrained(str(saved))
    assert got["cls"] == type(ref).__name__
    texts = ["Hello there!", "naïve café 🙂 <|im_end|> 12345", "\n\nHuman: hi\n\nAssistant: ok"]
    assert got["ids"] == [ref(t)["input_ids"] for t in texts]
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert got["chat"] == ref.apply_chat_template(msgs, tokenize=False)
    assert got["special"] == [ref.eos_token_id, ref.pad_token_id, ref.bos_token_id, ref.padding_side]


def test_cpu_worker_imports_neither_torch_nor_sklearn() -> None:
    """A worker of a default scan, built in a fresh process and run on a batch as the pool does, with the device
    resolved to cpu; the stages are the ones a default scan of the example runs."""
    from pairaudit.config import ScanConfig
    from pairaudit.io.readers import open_source
    from pairaudit.pipeline import Scanner

    sc = Scanner(ScanConfig(device="cpu"), lambda m: None)
    sc.source = open_source(EXAMPLE)
    sc._make_stages()
    specs = [(f"{type(s).__module__}:{type(s).__name__}", sorted(s.enabled)) for s in sc.stages]
    flips = next(s for s in sc.stages if type(s).__name__ == "FlipStage")
    assert "NearDuplicateStage" in {type(s).__name__ for s in sc.stages} and flips.static is not None
    flips.static._load()  # the static model distilled into this cache before (a worker only loads it)
    cache = sc.ctx.cache_dir
    _save_conversion(cache)  # and the tokenizer's conversion saved
    got = _run(f"""
import json, sys
from pairaudit.config import ScanConfig
from pairaudit.engines.pool import _Worker
from pairaudit.io.readers import open_source

w = _Worker(ScanConfig(device="cpu"), None, None, {specs!r}, {str(cache)!r}, None)
out = w.run(next(open_source({str(EXAMPLE)!r}).batches(200)))
print(json.dumps({{"errors": out["errors"], "rows": out["result"].n_records, "pairs": len(out["states"]),
                  "imported": [m for m in ("torch", "sklearn") if m in sys.modules]}}))
""")
    assert got["errors"] == {} and got["rows"] == 200 and got["pairs"] == len(specs)
    assert got["imported"] == []


def test_pool_hands_workers_the_resolved_device() -> None:
    import torch  # imported: asking costs nothing, so "auto" is resolved

    from pairaudit.models.device import resolved_if_known

    want = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolved_if_known("auto") == want
    assert resolved_if_known("cpu") == "cpu"
    got = _run("""
import json, sys
from pairaudit.models.device import resolved_if_known
print(json.dumps({"auto": resolved_if_known("auto"), "torch": "torch" in sys.modules}))
""")
    assert got == {"auto": "auto", "torch": False}  # torch not imported: left for the worker to ask
