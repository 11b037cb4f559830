"""Feeders at work, before any socket: the values each share draws, reproducible from the
seed, split between shares without overlap, read from files without holding them, and
what happens when the rows run out (issue 18)."""

from __future__ import annotations

import csv
import json
import random
import re
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_netbench import FeederExhausted, SpecError, feeders
from pytest_netbench._model.feeders import FeedBatch, Feeder
from pytest_netbench._proto import rows as rows_proto
from pytest_netbench._proto.feeding import Columns, values_for


def take(
    feeder: Feeder,
    n: int,
    fields: tuple[str | None, ...] = (None,),
    *,
    seed: int = 0,
    share: int = 0,
    shares: int = 1,
    batch: int | None = None,
) -> Columns:
    """The first ``n`` values, taken ``batch`` at a time (all at once by default)."""
    values = values_for("f", feeder, fields, seed=seed, share=share, shares=shares)
    out: Columns = [[] for _ in fields]
    try:
        while len(out[0]) < n:
            step = min(batch or n, n - len(out[0]))
            columns = values.take(step)
            for column, more in zip(out, columns, strict=True):
                column.extend(more)
            if len(columns[0]) < step:
                break
    finally:
        values.close()
    return out


def write_csv(path: Path, rows: int, *, header: str = "id,name") -> Path:
    with path.open("w") as file:
        file.write(header + "\n")
        file.writelines(f"{i},name{i}\n" for i in range(rows))
    return path


RANDOM = [
    feeders.randint(1, 1_000_000),
    feeders.choice(["a", "b", "c"], weights=[5, 1, 1]),
    feeders.uuid4(),
]


@pytest.mark.parametrize("feeder", RANDOM, ids=lambda f: type(f).__name__)
def test_the_same_seed_gives_the_same_values_whatever_the_batches(feeder: Feeder) -> None:
    once = take(feeder, 1000, seed=7)
    assert take(feeder, 1000, seed=7, batch=33) == once
    assert take(feeder, 1000, seed=7, batch=1) == once
    assert take(feeder, 1000, seed=8) != once
    assert take(feeder, 1000, seed=7, share=1, shares=2) != once  # each share its own stream


def test_a_count_is_split_between_shares_and_never_repeats() -> None:
    feeder = feeders.count(start=100, step=2)
    assert take(feeder, 4) == [[100, 102, 104, 106]]
    shares = [take(feeder, 5, share=i, shares=3, batch=2)[0] for i in range(3)]
    assert shares == [
        [100, 106, 112, 118, 124],
        [102, 108, 114, 120, 126],
        [104, 110, 116, 122, 128],
    ]
    assert sorted(v for s in shares for v in s) == list(range(100, 130, 2))


def test_randint_stays_in_its_range_and_reaches_both_ends() -> None:
    (values,) = take(feeders.randint(-2, 2), 2000)
    assert set(values) == {-2, -1, 0, 1, 2}
    (huge,) = take(feeders.randint(0, 2**80), 50)  # beyond a float's precision: no bias
    assert all(0 <= v <= 2**80 for v in huge) and len(set(huge)) == 50


def test_weighted_choices_follow_their_weights() -> None:
    (values,) = take(feeders.choice(["a", 2, b"\xff"], weights=[6, 3, 1]), 20_000)
    counts = Counter(values)
    assert set(counts) == {b"a", b"2", b"\xff"}
    assert counts[b"a"] / 20_000 == pytest.approx(0.6, abs=0.02)
    assert counts[b"\xff"] / 20_000 == pytest.approx(0.1, abs=0.02)


def test_uuids_are_version_4_in_their_canonical_form() -> None:
    (values,) = take(feeders.uuid4(), 500)
    assert len(set(values)) == 500
    for value in values:
        parsed = uuid.UUID(value.decode())
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed).encode() == value


def test_csv_rows_in_file_order_give_the_columns_asked_for(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "u.csv", 3)
    assert take(feeders.csv(path), 4, ("name", "id")) == [
        [b"name0", b"name1", b"name2", b"name0"],  # wraps by default
        [b"0", b"1", b"2", b"0"],
    ]


def test_a_csv_file_without_a_header_names_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("7\n8\n")
    assert take(feeders.csv(path, columns=["id"]), 3, ("id",)) == [[b"7", b"8", b"7"]]


def test_quoted_csv_fields_may_hold_delimiters_quotes_and_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes(b'id,text\r\n1,"a, b"\r\n2,"say ""hi"""\r\n\r\n3,"two\nlines"\r\n4,plain\r\n')
    assert take(feeders.csv(path, on_end="stop"), 10, ("id", "text")) == [
        [b"1", b"2", b"3", b"4"],
        [b"a, b", b'say "hi"', b"two\nlines", b"plain"],
    ]
    shared = [
        take(feeders.csv(path, on_end="stop"), 10, ("id",), share=i, shares=2) for i in (0, 1)
    ]
    assert shared == [[[b"1", b"3"]], [[b"2", b"4"]]]


@pytest.mark.parametrize("chunk", [7, 16, 64, 1 << 18])
def test_a_file_reads_the_same_whatever_the_chunks_it_is_read_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # Quoted fields with line breaks, blank lines, CRLF, a line longer than a chunk, and a
    # last line without a line break: each read as csv.reader reads it.
    rows = [[str(i), f'text "{i}"\nmore, {i}' if i % 3 == 0 else "x" * (i % 40)] for i in range(60)]
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as file:
        file.write("id,text\r\n")
        writer = csv.writer(file, lineterminator="\r\n")
        for i, row in enumerate(rows):
            writer.writerow(row)
            if i % 7 == 0:
                file.write("\r\n")
    path.write_bytes(path.read_bytes().rstrip(b"\r\n"))
    monkeypatch.setattr(rows_proto, "_CHUNK_BYTES", chunk)
    for shares in (1, 2):
        mine = rows[shares - 1 :: shares]
        expected = [[r[0].encode() for r in mine], [r[1].encode() for r in mine]]
        read = feeders.csv(path, on_end="stop")
        assert take(read, 100, ("id", "text"), share=shares - 1, shares=shares, batch=5) == expected
        shuffled = feeders.csv(path, order="shuffle", on_end="stop")
        ids, texts = take(shuffled, 100, ("id", "text"), share=shares - 1, shares=shares)
        assert sorted(zip(ids, texts, strict=True)) == sorted(zip(*expected, strict=True))


@pytest.mark.parametrize(
    ("rows", "bad"),
    [
        ("1,a\n2\n3,c\n", "'2'"),
        # A row short of a field and one with a field too many, in one batch: the count of
        # fields is right, and the fields between them would shift without the row check.
        ("1,a\n2\n3,c,extra\n", "'2'"),
        ('1,a\n2,"b"\n3,"c",x\n', "'3,\"c\",x'"),
    ],
)
def test_a_csv_row_of_the_wrong_width_is_refused_with_the_row(
    tmp_path: Path, rows: str, bad: str
) -> None:
    path = tmp_path / "w.csv"
    path.write_text("id,name\n" + rows)
    with pytest.raises(
        SpecError, match=f"has [13] fields where the header has 2: b{re.escape(bad)}"
    ):
        take(feeders.csv(path), 3, ("id",))


def test_jsonl_gives_the_line_or_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    path.write_text(
        '{"id": 1, "tags": ["a"], "ok": true}\n\n{"id": "x", "tags": null, "ok": false}\n'
    )
    assert take(feeders.jsonl(path), 2, (None, "id", "tags", "ok")) == [
        [b'{"id": 1, "tags": ["a"], "ok": true}', b'{"id": "x", "tags": null, "ok": false}'],
        [b"1", b"x"],  # text as it is, anything else as JSON writes it
        [b'["a"]', b"null"],
        [b"true", b"false"],
    ]


def test_a_jsonl_row_without_a_field_says_which(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    path.write_text('{"id": 1}\n{"other": 2}\n')
    with pytest.raises(SpecError, match=r"a row has no field 'id'.*other"):
        take(feeders.jsonl(path), 2, ("id",))


@pytest.mark.parametrize("order", ["sequential", "shuffle"])
@pytest.mark.parametrize("shares", [1, 2, 3])
def test_each_row_once_across_shares_covers_every_row_exactly_once(
    tmp_path: Path, order: str, shares: int
) -> None:
    path = write_csv(tmp_path / "u.csv", 1000)
    feeder = feeders.csv(path, order=order, on_end="stop")  # type: ignore[arg-type]
    seen = [
        take(feeder, 10_000, ("id",), share=i, shares=shares, batch=64)[0] for i in range(shares)
    ]
    assert sorted(int(v) for part in seen for v in part) == list(range(1000))
    sizes = [len(part) for part in seen]
    assert max(sizes) - min(sizes) <= 1
    if order == "sequential":  # share i of n: rows i, i+n, ...
        assert seen[-1][:3] == [
            b"%d" % (shares - 1),
            b"%d" % (2 * shares - 1),
            b"%d" % (3 * shares - 1),
        ]
    else:
        assert seen[0] != sorted(seen[0], key=int)


def test_a_shuffle_sends_each_row_once_a_pass_in_a_new_order_each_pass(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "u.csv", 100)
    (values,) = take(feeders.csv(path, order="shuffle"), 300, ("id",), seed=3, batch=17)
    passes = [values[i : i + 100] for i in (0, 100, 200)]
    assert all(sorted(p) == sorted(b"%d" % i for i in range(100)) for p in passes)
    assert passes[0] != passes[1] != passes[2]
    assert take(feeders.csv(path, order="shuffle"), 300, ("id",), seed=3) == [values]


def test_random_rows_may_repeat_and_never_run_out(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "u.csv", 10)
    (values,) = take(feeders.csv(path, order="random"), 1000, ("id",))
    assert len(values) == 1000 and set(values) == {b"%d" % i for i in range(10)}


@pytest.mark.parametrize("order", ["sequential", "shuffle"])
def test_when_the_rows_run_out(tmp_path: Path, order: str) -> None:
    path = write_csv(tmp_path / "u.csv", 5)
    wrap = take(feeders.csv(path, order=order), 12, ("id",), batch=4)  # type: ignore[arg-type]
    assert len(wrap[0]) == 12 and Counter(wrap[0])[b"0"] in (2, 3)
    stop = take(feeders.csv(path, order=order, on_end="stop"), 12, ("id",), batch=4)  # type: ignore[arg-type]
    assert sorted(stop[0]) == [b"0", b"1", b"2", b"3", b"4"]
    with pytest.raises(FeederExhausted, match=r"ran out of rows.*on_end='error'"):
        take(feeders.csv(path, order=order, on_end="error"), 12, ("id",), batch=4)  # type: ignore[arg-type]
    # Exactly as many as there are is not running out.
    assert len(take(feeders.csv(path, order=order, on_end="error"), 5, ("id",))[0]) == 5  # type: ignore[arg-type]


def test_a_share_with_no_rows_cannot_wrap(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "u.csv", 2)
    with pytest.raises(FeederExhausted, match="no rows for share 2 of 3"):
        take(feeders.csv(path), 1, ("id",), share=2, shares=3)
    assert take(feeders.csv(path, on_end="stop"), 1, ("id",), share=2, shares=3) == [[]]


def test_a_long_file_wraps_by_reading_it_again(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "u.csv", 10_000)  # more than a share keeps to replay
    (values,) = take(feeders.csv(path), 25_000, ("id",), share=1, shares=2, batch=3000)
    expected = [b"%d" % i for i in range(1, 10_000, 2)]
    assert values == (expected * 5)[:25_000]


@pytest.fixture(scope="module")
def million_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_csv(tmp_path_factory.mktemp("rows") / "big.csv", 1_000_000)


# Run in a fresh interpreter, whose anonymous memory (the heap: not the file's pages, which
# the page cache holds and mmap shares) is measured before the source exists and while it
# is half-way through its rows. Holding the 500,000 rows of a share would take about 28 MB.
HOLDS = """
import sys
from pytest_netbench import feeders
from pytest_netbench._proto.feeding import values_for

def anon_kb():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])

path, order = sys.argv[1], sys.argv[2]
before = anon_kb()
values = values_for("f", feeders.csv(path, order=order, on_end="stop"), ("id",), seed=0,
                    share=1, shares=2)
seen = bytearray(1_000_000)  # one byte a row of the file (1 MB, counted in the figure)
for _ in range(62):  # 253,952 of the share's 500,000 rows
    (column,) = values.take(4096)
    for row in map(int, column):
        seen[row] += 1
print(sum(seen), max(seen), sum(seen[0::2]), anon_kb() - before)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("order", ["sequential", "shuffle"])
def test_a_million_row_file_is_streamed_not_held(million_rows: Path, order: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", HOLDS, str(million_rows), order],
        capture_output=True,
        text=True,
        check=True,
    )
    rows, most, even, grown_kb = map(int, out.stdout.split())
    assert (rows, most, even) == (62 * 4096, 1, 0)  # share 1 of 2: odd rows only, none twice
    # In file order a share keeps a chunk of lines; shuffled, where each of its rows starts
    # (8 bytes a row: 4 MB).
    assert grown_kb < (8_000 if order == "sequential" else 12_000), f"{grown_kb:,} kB held"


def make_names(batch: FeedBatch) -> list[dict[str, Any]]:
    """A function for feeders.call: rows numbered across the whole load."""
    return [{"id": n, "name": f"user{n}"} for n in batch.numbers]


def limited(batch: FeedBatch) -> Sequence[int]:
    return [n for n in batch.numbers if n < 10]


def seeded(batch: FeedBatch) -> list[float]:
    return [batch.rng.random() for _ in range(batch.size)]


def test_a_function_is_called_in_batches_with_load_wide_numbers() -> None:
    feeder = feeders.call(make_names, batch=4)
    shares = [take(feeder, 6, ("id", "name"), share=i, shares=2, batch=5) for i in (0, 1)]
    assert shares[0] == [
        [b"0", b"2", b"4", b"6", b"8", b"10"],
        [b"user%d" % i for i in range(0, 12, 2)],
    ]
    assert shares[1][0] == [b"1", b"3", b"5", b"7", b"9", b"11"]
    by_reference = feeders.call(f"{__name__}:make_names", batch=4)
    assert take(by_reference, 6, ("id", "name"), share=1, shares=2) == shares[1]


def test_a_function_that_returns_fewer_values_has_run_out() -> None:
    assert take(feeders.call(limited, batch=3), 100, batch=7) == [[b"%d" % i for i in range(10)]]
    with pytest.raises(FeederExhausted, match="ran out after 10 values"):
        take(feeders.call(limited, batch=3, on_end="error"), 100)


def test_a_function_gets_a_generator_seeded_from_the_load() -> None:
    once = take(feeders.call(seeded, batch=8), 20, seed=1)
    assert take(feeders.call(seeded, batch=8), 20, seed=1, batch=3) == once
    assert take(feeders.call(seeded, batch=8), 20, seed=2) != once


def test_feeders_describe_themselves_as_data() -> None:
    assert feeders.csv("u.csv", order="shuffle").to_dict() == {
        "kind": "csv",
        "path": "u.csv",
        "order": "shuffle",
        "on_end": "wrap",
        "columns": [],
        "delimiter": ",",
    }
    assert feeders.call(make_names).to_dict()["function"] == f"{__name__}:make_names"
    assert json.loads(json.dumps(feeders.choice([b"\xff", 1]).to_dict()))["values"] == ["\\xff", 1]
    assert re.fullmatch(r"netbench:\d+:f:\d+", "netbench:0:f:1")
    random.Random("netbench:0:f:1")  # a str seed: the same in every process
