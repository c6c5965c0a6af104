"""The trainer emulation: what the trainer the user runs (today's TRL by default) does to each row.

- :mod:`.profiles`: trainer profiles and settings (limits, truncation mode, row filters, prompt extraction);
- :mod:`.tokenizer`: tokenization and truncation exactly as the trainer does it (``DPOTokenizer``).
"""
