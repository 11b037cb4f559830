"""The garbage collector kept out of the command's start-up and exit (issue 35).

Starting up allocates only what lives until the process ends (modules, classes, the
parser), yet the collector walks it again and again as it grows, and all of it once more
at exit. :func:`hold` (the console script, :func:`pytest_netbench.cli.command`) turns it
off; :func:`release` turns it back on once the command has imported what it runs, first
freezing what exists (moved where no collection looks: the run's collections are the
cheaper for it). A load releases it as its load begins, every other command as it starts.
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    """Collect nothing until :func:`release` (a process of its own only: the console
    script's; ``main()`` called in a process that goes on never holds it)."""
    global _held
    gc.disable()
    _held = True


def release() -> None:
    """Freeze what start-up made and collect as usual again; nothing if not held."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
