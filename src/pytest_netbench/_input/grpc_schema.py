"""A gRPC call's request message written as JSON, as ghz takes it: the method's schema from
a ``.proto`` file compiled at run time (grpcio-tools' protoc), or from the server's
reflection service (grpcio-reflection), and the JSON parsed into that message and
serialized once, before the load.

The load itself sends bytes (``grpc_load(url, method, message)``), so nothing here is on
the hot path; both libraries are the optional extra ``grpc``. Every mistake is a
:class:`SpecError` naming what exists: a service or method the schema has not, a field
the message has not, a value of the wrong type, a server without reflection.
"""

from __future__ import annotations

import importlib
import importlib.resources
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_netbench._errors import SpecError
from pytest_netbench._input.target import guard_target
from pytest_netbench._public import publish

# protobuf's descriptors (no type stubs are installed; its API is checked by the tests).
DescriptorPool = Any
MethodDescriptor = Any

_EXTRA = "pip install 'pytest-netbench[grpc]'"
# How long reflection may take to answer (it is asked before the load, once).
REFLECTION_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class Schema:
    """The descriptors a method is looked up in, and where they came from (for errors)."""

    pool: DescriptorPool
    services: tuple[str, ...]
    where: str
    channel: Any = None  # reflection's gRPC channel, closed once the message is made


def grpc_message_from_json(
    method: str,
    data: str | dict[str, Any] = "{}",
    *,
    proto: str | Path | Sequence[str | Path] = (),
    import_paths: Sequence[str | Path] = (),
    url: str | None = None,
    allow_remote: bool = False,
    server_streaming: bool = False,
) -> bytes:
    """The serialized request message of ``method`` (``/package.Service/Method``) from
    ``data`` (a JSON object, or a dict), typed by ``proto`` (``.proto`` files, compiled with
    ``import_paths``) or, without one, by the reflection service of the server at ``url``.
    ``server_streaming``: ``method`` may be a server-streaming one (for a load with
    ``stream="grpc"``); else it must be unary.
    """
    if isinstance(data, dict):
        try:
            data = json.dumps(data)
        except (TypeError, ValueError) as exc:
            raise SpecError(f"the message's dict cannot be written as JSON: {exc}") from None
    if not isinstance(data, str):
        raise SpecError(f"the message must be JSON text or a dict, got {type(data).__name__}")
    files = [proto] if isinstance(proto, str | Path) else list(proto)
    if files:
        schema = schema_from_proto([Path(f) for f in files], [Path(p) for p in import_paths])
    elif url is not None:
        schema = schema_from_reflection(url, allow_remote=allow_remote)
    else:
        raise SpecError(
            "a JSON message needs its schema: a .proto file (proto=, CLI --proto), or the"
            " server's reflection (url=)"
        )
    try:
        return encode_json(schema, method, data, server_streaming=server_streaming)
    finally:
        if schema.channel is not None:
            schema.channel.close()  # reflection's: asked lazily, so open until here


def schema_from_proto(files: Sequence[Path], import_paths: Sequence[Path]) -> Schema:
    """The schema of ``files`` compiled by protoc (with its well-known types)."""
    protoc = _require("grpc_tools.protoc", "compiling a .proto")
    descriptor_pb2 = _require("google.protobuf.descriptor_pb2", "compiling a .proto")
    descriptor_pool = _require("google.protobuf.descriptor_pool", "compiling a .proto")
    files = [_located(file, import_paths) for file in files]
    includes = dict.fromkeys([*import_paths, *(f.parent for f in files)])
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="netbench-proto-") as tmp:
        out = Path(tmp) / "set.pb"
        argv = ["protoc", f"--descriptor_set_out={out}", "--include_imports"]
        argv += [f"-I{path}" for path in includes] + [f"-I{well_known}"]
        code, said = _with_stderr(lambda: protoc.main([*argv, *(str(f) for f in files)]))
        if code != 0:
            # protoc's own errors, without the logging library's start-up warnings.
            lines = [line for line in said.splitlines() if line and not line.startswith("WARNING")]
            said = "; ".join(lines) or f"protoc exited with {code}"
            raise SpecError(f"cannot compile {', '.join(map(str, files))}: {said}")
        found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    services: list[str] = []
    for file_proto in found.file:
        pool.Add(file_proto)
        prefix = f"{file_proto.package}." if file_proto.package else ""
        services += [prefix + service.name for service in file_proto.service]
    return Schema(pool, tuple(services), ", ".join(str(f) for f in files))


def schema_from_reflection(url: str, *, allow_remote: bool = False) -> Schema:
    """The schema the server at ``url`` offers through its reflection service."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.port is None:
        raise SpecError(f"a gRPC server's URL is http://HOST:PORT or https://..., got {url!r}")
    guard_target(parts.hostname, allow_remote=allow_remote)  # before any socket
    if parts.scheme == "https":
        raise SpecError(
            "reflection is asked over plain HTTP/2 (h2c) only: give the method's .proto"
            " (proto=, CLI --proto) for a TLS server"
        )
    grpc = _require("grpc", "asking a server's reflection")
    database_module = _require(
        "grpc_reflection.v1alpha.proto_reflection_descriptor_database",
        "asking a server's reflection",
    )
    descriptor_pool = _require("google.protobuf.descriptor_pool", "asking a server's reflection")

    interceptor: Any = grpc.StreamStreamClientInterceptor

    class Deadline(interceptor):  # type: ignore[misc]
        """Every call on the channel gets a deadline: reflection cannot hang a run."""

        def intercept_stream_stream(
            self, continuation: Callable[..., Any], details: Any, requests: Any
        ) -> Any:
            return continuation(details._replace(timeout=REFLECTION_TIMEOUT_S), requests)

    channel = grpc.intercept_channel(grpc.insecure_channel(parts.netloc), Deadline())
    database = database_module.ProtoReflectionDescriptorDatabase(channel)
    try:
        services = tuple(database.get_services())
    except grpc.RpcError as exc:
        channel.close()
        code = exc.code().name if callable(getattr(exc, "code", None)) else "failed"
        details = exc.details() if callable(getattr(exc, "details", None)) else str(exc)
        raise SpecError(
            f"the server at {url} did not answer a reflection request ({code}: {details}):"
            " give the method's .proto (proto=, CLI --proto)"
        ) from None
    # The pool asks the database lazily, on lookup; the channel stays open until then.
    pool = descriptor_pool.DescriptorPool(database)
    return Schema(pool, services, f"the reflection of {url}", channel)


def encode_json(schema: Schema, method: str, data: str, *, server_streaming: bool = False) -> bytes:
    """``data`` parsed as ``method``'s request message and serialized (``server_streaming``:
    ``method`` may stream its answers)."""
    json_format = _require("google.protobuf.json_format", "a JSON message")
    message_factory = _require("google.protobuf.message_factory", "a JSON message")
    descriptor = find_method(schema, method, server_streaming=server_streaming)
    message = message_factory.GetMessageClass(descriptor.input_type)()
    try:
        json_format.Parse(data, message)
    except json_format.ParseError as exc:
        fields = ", ".join(
            f"{field.json_name} ({_type_name(field)})" for field in descriptor.input_type.fields
        )
        raise SpecError(
            f"the message does not fit {descriptor.input_type.full_name}: {exc}"
            f" (its fields: {fields or 'none'})"
        ) from None
    encoded: bytes = message.SerializeToString()
    return encoded


def find_method(schema: Schema, method: str, *, server_streaming: bool = False) -> MethodDescriptor:
    """``/package.Service/Method`` (or ``package.Service/Method``) in the schema: unary,
    or with ``server_streaming`` unary or server streaming."""
    service_name, _, name = method.strip("/").rpartition("/")
    if not service_name or not name:
        raise SpecError(f"a gRPC method is /package.Service/Method, got {method!r}")
    if service_name not in schema.services:
        offered = ", ".join(sorted(schema.services)) or "none"
        raise SpecError(f"no service {service_name} in {schema.where} (its services: {offered})")
    service = schema.pool.FindServiceByName(service_name)
    found: MethodDescriptor | None = service.methods_by_name.get(name)
    if found is None:
        names = ", ".join(sorted(service.methods_by_name)) or "none"
        raise SpecError(f"{service_name} has no method {name} (its methods: {names})")
    if found.server_streaming and not found.client_streaming and not server_streaming:
        raise SpecError(
            f"{service_name}/{name} streams, and netbench grpc makes unary calls unless asked"
            " for a server stream: load it with stream='grpc' (CLI --stream grpc)"
        )
    if found.client_streaming:
        raise SpecError(
            f"{service_name}/{name} streams, and netbench grpc makes unary calls: pick a"
            " unary method"
        )
    return found


def _located(file: Path, import_paths: Sequence[Path]) -> Path:
    """``file`` as given, else under one of ``import_paths`` (as protoc finds it)."""
    for candidate in (file, *(path / file for path in import_paths)):
        if candidate.is_file():
            return candidate
    where = f" (nor under {', '.join(map(str, import_paths))})" if import_paths else ""
    raise SpecError(f"no .proto file at {file}{where}")


def _type_name(field: Any) -> str:
    if field.message_type is not None:
        return str(field.message_type.full_name)
    if field.enum_type is not None:
        return str(field.enum_type.full_name)
    names = {
        1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 8: "bool", 9: "string",
        12: "bytes", 13: "uint32", 17: "sint32", 18: "sint64",
    }  # fmt: skip
    return names.get(field.type, "number")


def _require(module: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SpecError(f"{what} needs grpcio-tools and grpcio-reflection: {_EXTRA}") from None


def _with_stderr(call: Callable[[], int]) -> tuple[int, str]:
    """``call()``'s result and what it wrote to file descriptor 2 (protoc's errors)."""
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            code = call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return code, sink.read().decode(errors="replace")


publish(globals())
