"""Baselines and the regression gate as data, with no pytest import: stored runs
(``storage``), rank test and bootstrap interval (``significance``), thresholds and verdicts
(``gate``). Their text and Markdown are rendered in ``_report.comparison``."""
