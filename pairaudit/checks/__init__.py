"""Per-pair checks: one module per check (or per family), registered in :mod:`.registry`.

Adding a check takes one module, one registry line and one test:

1. ``checks/<name>.py``: a :class:`~.base.PairCheck` subclass whose ``info = CheckInfo(name, description,
   default_action, summary=..., thresholds=..., why=...)`` declares everything once (the CLI, config file,
   report and ``pairaudit checks`` read it); ``check(pair, enc, out)`` appends ``self.finding(pair.row,
   field, score, detail=...)`` and returns ``{self.info.score_key: score}`` (thresholds: ``self.params``).
2. ``checks/registry.py``: add the class to ``PAIR_CHECKS`` (the order is the report's order).
3. ``tests/checks/test_<name>.py``: call the class directly on tiny inline pairs (``tests/support/checks.py``).
Then ``python scripts/checks_table.py --write`` regenerates the check table of docs/checks.md (a test
fails, saying so, when it is stale). Whole-dataset checks are stages: :mod:`pairaudit.stages`.
"""
