"""The engine's loop-free part, written once for every loop: what counts as sent, ok, an
error or in flight, the open-loop schedule and ramps, a share's split and watch, HTTP/2
streams and listen pushes as rules, the TLS context and the words of a failure, and the
clocks. Nothing here imports asyncio or trio, nor opens a socket."""
