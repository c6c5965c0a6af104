"""``malformed_record``: produced by the reader and normaliser, not by a per-pair method."""

from pairaudit.checks.base import CheckInfo

INFO = CheckInfo(
    "malformed_record",
    "unparseable line, invalid UTF-8, duplicate keys, missing required fields or wrong types "
    "(e.g. a number, boolean or null where text belongs)",
    "drop",
    summary="unparseable / ill-typed record",
    why="a record that cannot be parsed cannot be trained on",
)
