"""``python -m pairaudit.cli``: the command line."""

from pairaudit.cli import app

app()
