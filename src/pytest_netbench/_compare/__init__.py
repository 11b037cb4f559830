"""Baselines and the regression gate, with no pytest import: stored runs (``storage``),
rank test and bootstrap interval (``significance``), thresholds and verdicts (``gate``)."""
