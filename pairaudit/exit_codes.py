"""The exit codes of ``pairaudit scan`` / ``trace`` (and ``Audit.exit_code`` in the API), in one place."""

from __future__ import annotations

from typing import Any

OK = 0  #: the scan ran every check it was asked to run
INPUT = 2  #: a usage, config or input error (also: the input could not be read to its end)
FAIL_ON = 3  #: a ``--fail-on CHECK>RATE`` limit was exceeded
#: a check or model failed (outputs are still written and the report says which), or the Ray engine lost a
#: worker (nothing written: the previous output generation is untouched)
CHECK_FAILED = 4
EMPTY = 5  #: nothing usable: no record could be read or every record was dropped (``--allow-empty``: 0)
TRACE_UNRELIABLE = 6  #: ``pairaudit trace`` could not name the failing step's rows reliably
INTERRUPTED = 130  #: Ctrl-C

HELP = (f"Exit codes: {OK} ok, {INPUT} usage or input error, {FAIL_ON} a --fail-on limit was exceeded, "
        f"{CHECK_FAILED} a check or model failed (outputs are still written and the report says which) or the ray "
        "engine lost a worker (previous outputs untouched), "
        f"{EMPTY} nothing usable: no record could be read or every record was dropped (--allow-empty for 0), "
        f"{TRACE_UNRELIABLE} `trace` could not name the failing step's rows reliably (trace.json says what to pass).")


def scan_code(report: dict[str, Any]) -> int:
    """The exit code of a finished scan, from its report.json."""
    if report["source"].get("damage"):
        return INPUT  # the input itself could not be read to its end
    if report["status"] == "empty" and len(report["problems"]) == 1:
        return EMPTY  # nothing usable came through (and nothing failed): never "ok"
    return OK if report["status"] == "ok" else CHECK_FAILED


def fail_on_code(code: int, report: dict[str, Any], limits: list[tuple[str, float]]) -> tuple[int, list[str]]:
    """Apply ``--fail-on`` limits to a scan's exit ``code``: (new code, one message per limit that fails).
    A gate on a check that did not run cannot pass (CHECK_FAILED); a rate above its limit is FAIL_ON."""
    messages = []
    for check, limit in limits:
        info = report["checks"][check]
        if info["status"] != "ran":
            messages.append(f"fail-on: {check} {info['status']} ({info['reason']}): the gate cannot pass without it")
            code = CHECK_FAILED
        elif info["rate"] > limit:
            messages.append(f"fail-on: {check} rate {info['rate']:.4f} > {limit}")
            code = max(code, FAIL_ON) if code != CHECK_FAILED else code
    return code, messages
