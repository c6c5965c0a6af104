"""Third-party progress bars that the libraries' own switches do not reach are off while pairaudit works."""

from __future__ import annotations

import importlib.util

import pytest

from pairaudit.quiet import tqdm_off


@pytest.mark.parametrize("module_name", ["transformers.modeling_gguf_pytorch_utils", "model2vec.distill.inference"])
def test_a_modules_own_tqdm_is_off_inside_and_restored_after(module_name: str, capsys: pytest.CaptureFixture
                                                              ) -> None:
    """transformers' "Converting and de-quantizing GGUF tensors" and model2vec's "Encoding tokens" bars (both a
    ``tqdm`` imported into the module) printed under ``-q``; inside ``tqdm_off`` the module's bar is disabled."""
    module = pytest.importorskip(module_name)
    before = module.tqdm
    with tqdm_off(module_name):
        assert list(module.tqdm(range(3), desc="a bar that must not show")) == [0, 1, 2]
        assert module.tqdm(range(1)).disable
    assert module.tqdm is before
    assert "a bar that must not show" not in capsys.readouterr().err


def test_a_missing_module_is_left_alone() -> None:
    with tqdm_off("pairaudit_no_such_module"):
        pass
    assert importlib.util.find_spec("pairaudit_no_such_module") is None
