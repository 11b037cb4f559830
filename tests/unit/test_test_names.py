"""Test modules are imported by their basename (the suite has no ``__init__.py`` files), so
two with the same name in different folders stop the whole suite at collection; a run of
one folder would not show it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parents[1]


def test_every_test_module_has_a_name_of_its_own() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert sorted(name for name, count in names.items() if count > 1) == []
