"""``python -m hostname_exec NAME -- COMMAND...``: set this UTS namespace's host name to
NAME, then become COMMAND (exec: same pid, so whoever started this can signal it).

Run under ``unshare --uts`` (see ``netns.Topology.command``), so the name is this
namespace's alone: each test "host" reports its own in ``socket.gethostname()``.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit("usage: python -m hostname_exec NAME -- COMMAND...")
    name, command = argv[0], argv[2:]
    socket.sethostname(name)
    # This directory was put on PYTHONPATH to find this module; the command needs none of it.
    here = str(Path(__file__).resolve().parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        os.environ.pop("PYTHONPATH", None)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
