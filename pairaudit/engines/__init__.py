"""Execution engines. The local engine is the default (pipeline.Scanner); ``ray_engine`` runs the same
batch processor and stage ``observe`` calls in Ray Data actors."""
