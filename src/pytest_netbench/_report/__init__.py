"""Every rendering, with no pytest import: text summary of one result (``summary``),
comparison matrices (``matrix``), comparisons with a baseline (``comparison``), Markdown
(``markdown``), pytest-benchmark's format (``benchmark_compat``) and PNG pictures (``plots/``).
Modules are imported by their users directly so nothing heavy loads early."""
