"""Readers, format normalisation and writers."""
