"""Baselines, significance tests and the regression gate (no pytest import)."""
