"""A griffe extension for the API reference (mkdocs.yml loads it): ``pytest_netbench``'s
``__all__`` is computed from the one table of public names (``_public.PUBLIC``), which
griffe's static reading cannot evaluate, so it is given the table's names."""

from __future__ import annotations

import ast
from typing import Any

import griffe

from pytest_netbench import __all__ as exported


class PublicTable(griffe.Extension):
    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any
    ) -> None:
        if mod.path == "pytest_netbench":
            mod.exports = list(exported)
