"""The trainer emulation: what the trainer the user runs (today's TRL by default) does to each row.

- :mod:`.profiles`: trainer profiles and settings (limits, truncation mode, row filters, prompt extraction);
- :mod:`.tokenizer`: tokenization exactly as the trainer does it (``DPOTokenizer``; :mod:`.joint_tokens`: each
  prompt tokenized once where that gives the same ids);
- :mod:`.truncation`: which prompt and completion tokens survive the trainer's truncation;
- :mod:`.split`: the prompt TRL extracts from implicit-prompt pairs.

Loading the tokenizer itself is :mod:`pairaudit.models.tokenizer`.
"""
