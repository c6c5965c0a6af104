"""docs/checks.md's check table, generated from the checks' own declarations (``CheckInfo``).

    python scripts/checks_table.py            # print the table
    python scripts/checks_table.py --write    # replace the table in docs/checks.md

tests/test_check_registry.py fails when the table in docs/checks.md differs from this one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DOC = ROOT / "docs" / "checks.md"
BEGIN = "<!-- check table: generated from the checks' CheckInfo by scripts/checks_table.py; do not edit -->"
END = "<!-- end of the generated check table -->"


def table() -> str:
    from pairaudit.catalog import all_checks, merged_thresholds
    from pairaudit.report.checklist import markdown_table

    infos = all_checks()
    return "\n".join(markdown_table(infos, {n: merged_thresholds(n) for n in infos}))


def replace(doc: str, new: str) -> str:
    """``doc`` with the text between the markers replaced by ``new``."""
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{DOC} lacks the markers {BEGIN!r} ... {END!r} around the check table")
    return f"{head}{BEGIN}\n{new}\n{END}{tail}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help=f"replace the table in {DOC.relative_to(ROOT)}")
    args = ap.parse_args()
    if not args.write:
        print(table())
        return
    DOC.write_text(replace(DOC.read_text(encoding="utf-8"), table()), encoding="utf-8")
    print(f"wrote the check table of {DOC}")


if __name__ == "__main__":
    main()
