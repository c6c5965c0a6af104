"""Tiny randomly initialised Llama models built from a config, with a tiny word-level tokenizer (pad == eos,
like SmolLM2) and a chat template, saved to folders and loaded by path (reference / policy model tests)."""

from __future__ import annotations

from pathlib import Path

WORDS = ("the a cat dog sat on mat ran fast slow red blue green is was and or not very good bad answer "
         "question what why how when who capital france paris colour sky grass blorf zork").split()
SPECIAL = ["<unk>", "<eos>", "<user>", "<assistant>"]
TEMPLATE = ("{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} <eos> {% endfor %}"
            "{% if add_generation_prompt %}<assistant> {% endif %}")


def build_tokenizer(folder: Path):
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS + [".", "?", ","])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>",
                                               pad_token="<eos>", additional_special_tokens=["<user>", "<assistant>"])
    tok.chat_template = TEMPLATE
    tok.save_pretrained(str(folder))
    return tok


def build_model(folder: Path, seed: int, vocab: int) -> None:
    import torch
    import transformers

    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                                   eos_token_id=1, pad_token_id=1, bos_token_id=None, tie_word_embeddings=False)
    model = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():  # larger weights than the default init so log-probs differ visibly
        for p in model.parameters():
            p.mul_(20.0)
    model.save_pretrained(str(folder))
