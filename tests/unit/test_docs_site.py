"""The documentation site builds with ``mkdocs build --strict`` (a broken link or a
docstring mkdocstrings cannot render fails it), offline, with every page in the nav and
every public name in the API reference."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_netbench

ROOT = Path(__file__).parents[2]
BUILD_S = 180


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None:
        message = "mkdocs is not installed (pip install -e '.[docs]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    done = subprocess.run(
        [*command, "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True,
        text=True,
        timeout=BUILD_S,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return out


def _nav_pages(entry: object) -> set[str]:
    if isinstance(entry, str):
        return {entry}
    if isinstance(entry, dict):
        return set().union(*(_nav_pages(v) for v in entry.values()))
    if isinstance(entry, list):
        return set().union(*(_nav_pages(v) for v in entry))
    return set()


def test_every_page_is_in_the_nav(site: Path) -> None:
    import yaml  # mkdocs depends on PyYAML

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    missing = sorted(pages - _nav_pages(config["nav"]))
    assert missing == [], f"add these pages to the nav in mkdocs.yml: {missing}"
    assert (site / "index.html").exists()


def test_the_site_fetches_nothing_from_outside(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text, page
        assert not re.search(r"<(script|link)[^>]+(src|href)=\"https?://", text), page


def test_the_api_reference_names_every_public_name(site: Path) -> None:
    text = (site / "api" / "index.html").read_text(encoding="utf-8")
    documented = set(re.findall(r'id="pytest_netbench\.([A-Za-z_][A-Za-z0-9_]*)"', text))
    expected = set(pytest_netbench.__all__) - {"__version__", "catalog", "feeders"}
    assert sorted(expected - documented) == []
    # The modules exported whole have sections of their own.
    assert 'id="pytest_netbench._servers.catalog.get"' in text
    assert 'id="pytest_netbench._model.feeders.csv"' in text
