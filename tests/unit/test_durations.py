"""One grammar for a length of time typed as text: the command line's seconds and a
stage's duration read the same forms (``--duration 1m30s`` was refused where
``--stage 1m30s:100`` was taken)."""

from __future__ import annotations

import argparse

import pytest

from pytest_netbench._cli.options import parse_duration as cli_duration
from pytest_netbench._errors import SpecError
from pytest_netbench._input.durations import parse_duration
from pytest_netbench._input.stages import parse_stage_text

FORMS = {
    "30s": 30.0,
    "1m30s": 90.0,
    "1m 30s": 90.0,
    "500ms": 0.5,
    "2h": 7200.0,
    "1.5": 1.5,
    "2m": 120.0,
    "0.25s": 0.25,
}


@pytest.mark.parametrize(("text", "seconds"), FORMS.items())
def test_every_form_reads_the_same_everywhere(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)
    assert cli_duration(text) == pytest.approx(seconds)
    assert parse_stage_text(f"{text}:10").duration_s == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["two seconds", "10x", "", "s", "1m30", "-5s", "inf", "nan"])
def test_what_is_not_a_duration_says_the_forms(text: str) -> None:
    with pytest.raises(SpecError, match=r"is not a duration: use e\.g\. 30s, 1m30s, 500ms"):
        parse_duration(text)
    with pytest.raises(argparse.ArgumentTypeError, match="is not a duration"):
        cli_duration(text)
