"""PNG pictures of a session, one module per kind: loads (latency spectrum, timeline),
sweeps, cold starts and matrices; ``session`` names the files and draws them all.

matplotlib is an optional extra, imported only by :mod:`.canvas` and only when a picture
is drawn (see docs/plots.md).
"""
