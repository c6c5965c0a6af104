"""Helpers shared by the tests (and by some scripts/): real-data planting, fixtures, a headless browser."""
