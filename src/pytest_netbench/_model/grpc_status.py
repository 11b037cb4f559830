"""gRPC's status codes and their names (gRPC's doc/statuscodes.md): what a gRPC load's
``status_codes`` keys mean, shared by the protocol layer that reads ``grpc-status`` and the
reports that name it."""

from __future__ import annotations

STATUS_NAMES = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}


def status_name(code: int) -> str:
    """``NOT_FOUND (5)``: a grpc-status as gRPC names it."""
    return f"{STATUS_NAMES.get(code, 'unknown code')} ({code})"
