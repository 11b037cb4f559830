"""Sans-IO protocols: HTTP/1.1, HTTP/2 (frames, HPACK, gRPC), WebSocket and raw TCP framing,
and a load's request sources (templates, feeders, rows); bytes in and out, no sockets, no loop."""
