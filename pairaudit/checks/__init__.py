"""Checks: one module per check (or per family), registered in ``registry``."""
