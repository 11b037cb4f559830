"""Server profiles as data: folding py-spy's and perf's output, ranking functions, the
bound on stacks kept, the JSON form and the text and Markdown renderings (the profilers
themselves run in tests/integration/test_server_profiles.py)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from factories import make_result

from pytest_netbench._compare.records import Record
from pytest_netbench._model import LoadResult, ServerProfile
from pytest_netbench._model.profile import OTHER_STACKS, bounded
from pytest_netbench._report.html.profile import flame_html, profiles_html
from pytest_netbench._report.profile import profile_lines
from pytest_netbench._report.profile_tables import profile_tables_markdown
from pytest_netbench._servers.profiling import fold_perf_script, fold_py_spy

PY_SPY = (
    'process 4242:"python -m gunicorn -b 127.0.0.1:8001 app:app";run (gunicorn/arbiter.py)'
    ';process 4243:"python -m gunicorn -b 127.0.0.1:8001 app:app";handle (sync.py)'
    ";render_page (app.py) 30\n"
    'process 4242:"python -m gunicorn -b 127.0.0.1:8001 app:app";run (gunicorn/arbiter.py)'
    ';process 4244:"python -m gunicorn -b 127.0.0.1:8001 app:app";handle (sync.py)'
    ";render_page (app.py) 20\n"
    'process 4242:"python -m gunicorn -b 127.0.0.1:8001 app:app";run (gunicorn/arbiter.py)'
    ';process 4244:"python -m gunicorn -b 127.0.0.1:8001 app:app";handle (sync.py) 10\n'
)
PERF = """nginx
\t    55d1 ngx_http_parse_request_line+0x21 (/usr/sbin/nginx)
\t    66e2 ngx_http_process_request_line+0x90 (/usr/sbin/nginx)
\t    77f3 main+0x12 (/usr/sbin/nginx)

nginx
\t    55d1 ngx_http_parse_request_line+0x44 (/usr/sbin/nginx)
\t    66e2 ngx_http_process_request_line+0x90 (/usr/sbin/nginx)
\t    77f3 main+0x12 (/usr/sbin/nginx)

nginx
\t    1234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t    77f3 main+0x12 (/usr/sbin/nginx)

nginx
\t    9abc [unknown] ([unknown])
\t    77f3 main+0x12 (/usr/sbin/nginx)
"""


def test_py_spy_stacks_add_up_across_workers_and_pids() -> None:
    folded = fold_py_spy(PY_SPY)
    stack = "[server process];run (gunicorn/arbiter.py);[child process];handle (sync.py)"
    assert folded == {f"{stack};render_page (app.py)": 50, stack: 10}


def test_perf_stacks_are_folded_root_first_under_the_process_name() -> None:
    folded = fold_perf_script(PERF)
    assert folded == {
        "nginx;main;ngx_http_process_request_line;ngx_http_parse_request_line": 2,
        "nginx;main;[libc.so.6]": 1,
        "nginx;main;[unknown]": 1,  # an address in no file perf knew
    }


def _profile() -> ServerProfile:
    return ServerProfile(
        tool="py-spy",
        samples=60,
        rate_hz=199,
        duration_s=1.0,
        processes=3,
        ok=100,
        cpu_ms_per_request=2.0,
        measured_cpu_ms_per_request=1.9,
        folded=fold_py_spy(PY_SPY),
    )


def test_functions_are_ranked_by_self_and_total_with_cpu_per_request() -> None:
    profile = _profile()
    top = profile.hottest(2)
    assert [f.name for f in top] == ["render_page (app.py)", "handle (sync.py)"]
    assert top[0].self_share == pytest.approx(50 / 60)
    assert top[0].self_cpu_ms_per_request == pytest.approx(50 / 60 * 2.0)
    assert top[1].total_share == 1.0 and top[1].self_samples == 10
    assert profile.sampling_cost == pytest.approx(2.0 / 1.9)
    assert math.isnan(replace(profile, measured_cpu_ms_per_request=math.nan).sampling_cost)


def test_the_stacks_kept_are_bounded_the_rest_summed() -> None:
    kept = bounded({f"s{i}": i + 1 for i in range(10)}, most=3)
    assert kept == {"s9": 10, "s8": 9, "s7": 8, OTHER_STACKS: 28}


def test_a_profile_round_trips_through_the_json_form() -> None:
    result = replace(make_result(10), profile=_profile())
    data = result.to_dict()
    assert data["profile"]["top_functions"][0]["name"] == "render_page (app.py)"
    back = LoadResult.from_dict(data)
    assert back.profile == result.profile
    assert LoadResult.from_dict({**data, "profile": None}).profile is None


def test_the_reports_show_the_top_functions_or_the_one_line_why_not() -> None:
    result = replace(make_result(10), profile=_profile())
    text = "\n".join(profile_lines(result))
    assert "Server profile (py-spy, 60 samples over 1.0 s of 3 processes" in text
    assert "83.3%" in text and "render_page (app.py)" in text
    assert "sampling cost" in text and "(x1.05)" in text
    problem = replace(make_result(10), profile=ServerProfile(problem="py-spy is not installed"))
    assert profile_lines(problem) == ["", "Server profile: none (py-spy is not installed)"]
    assert profile_lines(make_result(10)) == []
    record = Record(nodeid="t.py::test", function="test", params={}, result=result)
    markdown = profile_tables_markdown([record], "test")
    assert "#### Server profile" in markdown and "| 83.3% |" in markdown


def test_the_html_report_has_the_table_and_a_flame_graph() -> None:
    result = replace(make_result(10), profile=_profile())
    record = Record(nodeid="t.py::test", function="test", params={}, result=result)
    html = "".join(profiles_html([record], "test"))
    assert "<h4>Server profile</h4>" in html and "<code>render_page (app.py)</code>" in html
    flame = flame_html(_profile())
    # The root spans everything; render_page is 50 of handle's 60 samples wide.
    assert 'style="width:100.00%"' in flame and "[server process]" in flame
    assert 'style="width:83.33%"' in flame and 'title="render_page (app.py): 83.3% of' in flame
    problem = replace(result, profile=ServerProfile(problem="perf is not installed"))
    html = "".join(profiles_html([replace(record, result=problem)], "test"))
    assert "none: perf is not installed" in html and "flame" not in html
