"""Whole-dataset stages: they observe every surviving pair and decide in ``finalize``."""
