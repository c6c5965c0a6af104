"""Whole-dataset stages: they observe every surviving pair and decide in ``finalize``.

Adding one: a :class:`~.base.Stage` subclass whose ``infos`` declare its checks (``CheckInfo``, as a per-pair
check does: findings by ``info.finding(...)``, scores under ``info.score_key``, thresholds by
``self.params(info)``), the optional hooks it needs (``not_applicable``, ``reads_findings`` +
``set_findings``, ``refines``; see the base class), one ``"module:Class"`` line in :mod:`.registry`, one test.
"""
