"""What HPACK costs per HTTP/2 request, off the socket: the choice for ``_proto/h2_*``.

No server and no loop: process CPU per request (best of ``--repeat`` ``timeit`` rounds) of

- **encode, dynamic table**: ``hpack.Encoder.encode`` of a fixed GET header block, every
  request (the bytes differ after the first, as the table fills);
- **encode, never indexed, once**: the same block as literals that touch no table, encoded
  once per connection and re-sent as the same ``bytes``: the per-request cost is a ``bytes``
  concatenation with the frame header;
- **decode**: ``hpack.Decoder.decode`` of a typical Go net/http response block in its steady
  state (every field indexed from the dynamic table once the first response filled it);
- **decode, cached**: the same block through a cache keyed by its bytes, valid while the
  decoder's dynamic table is unchanged (what ``_proto/h2_headers.py`` does);
- **whole client exchange**: 10 requests at a time on one connection, the server's answers
  (HEADERS + DATA, from an ``h2`` server) recorded once and read by two clients in turn:
  the ``h2`` library's ``H2Connection`` (``send_headers``, ``data_to_send``,
  ``receive_data``, ``acknowledge_received_data``) and ``_proto.h2_client``
  (``open_streams``, ``data_to_send``, ``feed``).

    python benchmarks/bench_hpack.py [--repeat 5] [--number 20000]
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable

import h2.config
import h2.connection
import h2.events
import hpack

from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request
from pytest_netbench._proto.h2_headers import ResponseHeaderDecoder, encode_request_block

REQUEST = [
    (":method", "GET"),
    (":scheme", "http"),
    (":authority", "127.0.0.1:8080"),
    (":path", "/"),
    ("user-agent", "netbench"),
]
# What Go's net/http answers "Hello, World!" with.
RESPONSE = [
    (":status", "200"),
    ("content-type", "text/plain; charset=utf-8"),
    ("content-length", "13"),
    ("date", "Wed, 25 Nov 2026 15:00:00 GMT"),
]


def best_ns_per_call(call: Callable[[], object], number: int, repeat: int) -> float:
    timer = timeit.Timer(call, timer=time.process_time)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def encode_dynamic() -> Callable[[], object]:
    encoder = hpack.Encoder()
    return lambda: encoder.encode(REQUEST)


def encode_once() -> Callable[[], object]:
    encoder = hpack.Encoder()
    block = encoder.encode([hpack.NeverIndexedHeaderTuple(n, v) for n, v in REQUEST])
    frame_head = len(block).to_bytes(3, "big") + b"\x01\x05" + (1).to_bytes(4, "big")
    return lambda: frame_head + block


def steady_response() -> tuple[hpack.Decoder, bytes]:
    server, client = hpack.Encoder(), hpack.Decoder()
    client.decode(server.encode(RESPONSE))  # the first response fills the table
    return client, server.encode(RESPONSE)


def decode_plain() -> Callable[[], object]:
    decoder, block = steady_response()
    return lambda: decoder.decode(block)


def decode_cached() -> Callable[[], object]:
    decoder = ResponseHeaderDecoder()
    server = hpack.Encoder()
    decoder.status_of(server.encode(RESPONSE))
    block = server.encode(RESPONSE)
    return lambda: decoder.status_of(block)


def recorded_server(batches: int, streams: int) -> list[bytes]:
    """What an ``h2`` server sends a client making ``streams`` requests at a time, batch by
    batch from its preface on: recorded once, so both clients below read the same bytes."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    client.initiate_connection()
    server.initiate_connection()
    server.receive_data(client.data_to_send())
    recorded = [server.data_to_send()]
    for _ in range(batches):
        ids = []
        for _ in range(streams):
            stream_id = client.get_next_available_stream_id()
            client.send_headers(stream_id, REQUEST, end_stream=True)
            ids.append(stream_id)
        server.receive_data(client.data_to_send())
        for stream_id in ids:
            server.send_headers(stream_id, RESPONSE)
            server.send_data(stream_id, b"Hello, World!", end_stream=True)
        answer = server.data_to_send()
        for event in client.receive_data(answer):
            if isinstance(event, h2.events.DataReceived):
                client.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        recorded.append(answer)
    return recorded


def h2_library_client(recorded: list[bytes], streams: int) -> int:
    """CPU ns the ``h2`` library's client spends on the recorded exchange."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    client.data_to_send()
    client.receive_data(recorded[0])
    begin = time.process_time_ns()
    for answer in recorded[1:]:
        for _ in range(streams):
            client.send_headers(client.get_next_available_stream_id(), REQUEST, end_stream=True)
        client.data_to_send()
        for event in client.receive_data(answer):
            if isinstance(event, h2.events.DataReceived):
                client.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
    return time.process_time_ns() - begin


def netbench_client(recorded: list[bytes], streams: int) -> int:
    """CPU ns ``_proto.h2_client`` spends on the recorded exchange."""
    block = encode_request_block("GET", "http", "127.0.0.1:8080", "/")
    done: list[int] = []
    connection = H2ClientConnection(
        H2Request(block), lambda stream_id, status: done.append(status), lambda s, e: None
    )
    connection.initiate()
    connection.feed(recorded[0])
    begin = time.process_time_ns()
    for answer in recorded[1:]:
        connection.open_streams(streams)
        connection.data_to_send()
        connection.feed(answer)
    spent = time.process_time_ns() - begin
    assert len(done) == streams * (len(recorded) - 1), "every stream must have ended"
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=20_000)
    args = parser.parse_args()
    rows = [
        ("encode, dynamic table, every request", encode_dynamic()),
        ("encode, never indexed, once (re-sent)", encode_once()),
        ("decode response block, hpack", decode_plain()),
        ("decode response block, cached by bytes", decode_cached()),
    ]
    print(f"hpack {hpack.__version__}; process CPU per request, best of {args.repeat}")
    for label, call in rows:
        ns = best_ns_per_call(call, args.number, args.repeat)
        print(f"  {label:<48} {ns / 1000:7.2f} us")
    streams = 10
    batches = args.number // streams
    recorded = recorded_server(batches, streams)
    for label, client in (
        ("whole client exchange, h2 library", h2_library_client),
        ("whole client exchange, _proto.h2_client", netbench_client),
    ):
        ns = min(client(recorded, streams) for _ in range(args.repeat)) / (batches * streams)
        print(f"  {label + ', 10 streams':<48} {ns / 1000:7.2f} us")


if __name__ == "__main__":
    main()
