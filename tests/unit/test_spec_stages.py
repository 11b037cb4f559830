"""``stages=``: the forms a ramp is written in, and every option it contradicts refused
before any socket exists, each refusal saying what to do."""

from __future__ import annotations

import pytest

from pytest_netbench import SpecError, Stage, http_spec
from pytest_netbench._input.durations import parse_duration
from pytest_netbench._input.spec import echo_spec, scale_spec
from pytest_netbench._input.stages import parse_stage_text

URL = "http://127.0.0.1:8080/"


def test_every_form_of_a_stage_reads_the_same() -> None:
    spec = http_spec(
        URL,
        rate=0,
        stages=[Stage(30, 1000), ("1m", 1000), {"duration": "1m30s", "target": 0}, (0.5, 10)],
    )
    assert spec.stages == (Stage(30, 1000), Stage(60, 1000), Stage(90, 0), Stage(0.5, 10))
    assert spec.duration_s == 180.5  # the stages' sum
    assert spec.mode == "open" and spec.rate == 0.0


def test_a_closed_ramp_starts_from_connections_or_from_nothing() -> None:
    assert http_spec(URL, stages=[("10s", 50)]).connections == 0
    spec = http_spec(URL, connections=5, stages=[("10s", 50)])
    assert spec.connections == 5 and spec.mode == "closed"
    assert spec.pool_limit == 50  # the ramp's peak: what the pre-flight budgets for
    assert echo_spec("127.0.0.1", 7, stages=[("1s", 3)]).connect_first is False


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"stages": [("10s", 5)], "duration": 10}, "stages set the duration"),
        ({"stages": [("10s", 5)], "requests": 100}, "drop requests"),
        ({"stages": [("10s", 5)], "connect_first": True}, "drop connect_first"),
        ({"stages": [("10s", 0)]}, "would send nothing"),
        ({"stages": [("10s", 5)], "warmup": 2}, "start the ramp higher"),
        ({"stages": [("10s", 5)], "max_connections": 9}, "give rate="),
        ({"stages": []}, "stages is empty"),
        ({"stages": ("10s", 5)}, "stage 1 must be"),
        ({"stages": "10s:5"}, "stages must be a list"),
        ({"stages": [("10s", -1)]}, "the target must be >= 0"),
        ({"stages": [(0, 5)]}, "the duration must be > 0"),
        ({"stages": [("ten", 5)]}, "'ten' is not a duration"),
        ({"stages": [{"duration": "1s", "goal": 5}]}, "exactly the keys"),
        ({"stages": [("1s", 5)], "rate": -1}, "rate must be >= 0"),
    ],
)
def test_what_a_ramp_contradicts_is_refused(options: dict[str, object], words: str) -> None:
    with pytest.raises(SpecError, match=words):
        http_spec(URL, **options)  # type: ignore[arg-type]


def test_zero_rate_and_connections_need_a_ramp() -> None:
    with pytest.raises(SpecError, match="rate must be > 0"):
        http_spec(URL, rate=0)
    with pytest.raises(SpecError, match="connections must be > 0"):
        http_spec(URL, connections=0)


def test_a_warm_up_holds_a_start_above_zero() -> None:
    spec = http_spec(URL, rate=100, warmup=2, stages=[("3s", 300)])
    ramp = spec.ramp
    assert ramp is not None and ramp.lead_s == 2.0 and ramp.value_at(1.0) == 100.0
    assert ramp.value_at(3.5) == pytest.approx(200.0)


def test_scaling_a_ramp_stretches_each_stage() -> None:
    spec = scale_spec(http_spec(URL, rate=0, stages=[("2s", 100), ("1s", 0)]), 3.0)
    assert spec.stages == (Stage(6, 100), Stage(3, 0))
    assert spec.duration_s == 9.0


def test_the_command_line_form() -> None:
    assert parse_stage_text("30s:1000") == Stage(30, 1000)
    assert parse_stage_text("1m30s:0") == Stage(90, 0)
    assert parse_duration("500ms") == 0.5
    with pytest.raises(SpecError, match="DURATION:TARGET"):
        parse_stage_text("30s")
    with pytest.raises(SpecError, match="is not a number"):
        parse_stage_text("30s:lots")


@pytest.mark.parametrize("experiment", ["sweep", "capacity"])
def test_rate_steps_refuse_stages_before_any_load(experiment: str) -> None:
    import pytest_netbench

    run = getattr(pytest_netbench, experiment)
    extra = {"rates": [100]} if experiment == "sweep" else {}
    # Port 9 (discard): were anything sent, the load would fail as unreachable instead.
    with pytest.raises(SpecError, match="each step holds one rate"):
        run("http://127.0.0.1:9/", stages=[("1s", 10)], **extra)


def test_a_websocket_load_has_no_stages_option() -> None:
    """The option table's row says which loads ramp; a WebSocket load is refused by it,
    with the generic wording (and `netbench ws` has no --stage flag)."""
    from pytest_netbench import ws_spec
    from pytest_netbench._input.options import options_of

    assert "stages" not in {option.name for option in options_of("ws")}
    with pytest.raises(SpecError, match="'stages' is an option of HTTP and echo"):
        ws_spec("ws://127.0.0.1:9/", stages=[("1s", 10)])  # type: ignore[call-arg]
