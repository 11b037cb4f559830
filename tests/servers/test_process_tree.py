"""A process's descendants: from /proc's children files, and from a scan of the process
table where the kernel keeps none (the same tree either way), real processes each time."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pytest_netbench._servers import process_tree
from pytest_netbench._servers.process_tree import subtree_pids

# A child that starts a grandchild, says both pids and waits to be killed.
PARENT = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(grandchild.pid, flush=True)
time.sleep(60)
"""


@pytest.fixture
def family() -> Iterator[tuple[int, int]]:
    """(child pid, grandchild pid) of this process."""
    child = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    grandchild = int(child.stdout.readline())
    try:
        yield child.pid, grandchild
    finally:
        subprocess.run(["kill", "-9", str(grandchild)], check=False)
        child.kill()
        child.wait(timeout=10)
        child.stdout.close()


@pytest.mark.parametrize("source", ["children files", "process table"])
def test_the_subtree_is_listed_parents_first(
    family: tuple[int, int], source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if source == "children files" and not process_tree.has_children_files():
        pytest.skip("this kernel keeps no /proc/PID/task/TID/children")
    if source == "process table":
        monkeypatch.setattr(process_tree, "has_children_files", lambda: False)
    child, grandchild = family
    assert subtree_pids(child) == [child, grandchild]
    mine = subtree_pids(os.getpid())
    assert mine.index(child) < mine.index(grandchild)
    assert grandchild not in subtree_pids(os.getpid(), leave_out=child)


def test_a_process_that_is_gone_has_itself_as_its_subtree() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    assert subtree_pids(gone.pid) == [gone.pid]
