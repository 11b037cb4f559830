"""What opening a connection needs beside the loop: the TLS context, and the rule that ends a
load against a target that refuses every connect (:class:`FirstContact`, the same on every
loop, with the words of ``failures``). The asyncio connect itself is
``_engine.asyncio_io.connect``."""

from __future__ import annotations

import errno as errno_mod
import socket
import ssl
from typing import Any

from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.failures import NOT_TLS, describe_connect_error
from pytest_netbench._errors import TargetUnreachableError
from pytest_netbench._model import LoadSpec


def make_ssl_context(spec: LoadSpec) -> ssl.SSLContext | None:
    """The client TLS context of an ``https`` load; None for plain connections."""
    if spec.scheme != "https":
        return None
    context = ssl.create_default_context()
    if not spec.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if spec.protocol == "h2":
        context.set_alpn_protocols(["h2"])  # h2_connection names any other choice
    return context


# A share none of whose connects has succeeded gives up once its connects have been
# refused for this long (see FirstContact); until one succeeds, a connection whose connect
# was refused waits RETRY_UNREACHED_S before the next attempt.
GIVE_UP_NS = 300_000_000
RETRY_UNREACHED_S = 0.01
# Failures that are the target's answer, not a wait that ran out: nothing listens (or the
# host or network cannot be reached), or the TLS handshake was answered and failed.
_ANSWERED_NO = frozenset({errno_mod.ECONNREFUSED, errno_mod.EHOSTUNREACH, errno_mod.ENETUNREACH})


class FirstContact:
    """Whether one share has reached its target yet, and when to stop trying if it has not.

    Until a connect of the share has succeeded, every connect answered with a refusal (or
    a failed TLS handshake) is counted; once they have come for :data:`GIVE_UP_NS` with no
    success, nothing is listening there and the share gives up (``gave_up``): the load
    raises :class:`TargetUnreachableError` at once instead of refusing connects for its
    whole duration (a closed loop of 10 connections made 110,450 attempts in 2 s). A
    server that starts listening within that time, or any load where one connect has
    succeeded, is never stopped by this rule. Connect timeouts are not counted: each costs
    ``connect_timeout`` already, and a full accept queue times connects out too.
    """

    __slots__ = ("attempts", "first_failure_ns", "gave_up", "last_failure_ns", "reached", "sample")

    def __init__(self) -> None:
        self.reached = False
        self.gave_up = False
        self.attempts = 0  # connects answered no before any succeeded
        self.first_failure_ns = 0
        self.last_failure_ns = 0
        self.sample = ""

    def failed(self, exc: BaseException, now: int) -> bool:
        """A connect failed with ``exc`` (its informative cause); True when the share
        should give up now (see the class doc)."""
        if self.reached or not _answered_no(exc):
            return False
        self.attempts += 1
        self.last_failure_ns = now
        if not self.first_failure_ns:
            self.first_failure_ns = now
            self.sample = f"connect failed: {describe_connect_error(exc)}"
        self.gave_up = now - self.first_failure_ns >= GIVE_UP_NS
        return self.gave_up

    def error(self, spec: LoadSpec) -> TargetUnreachableError:
        """The error a share that gave up raises."""
        spent_s = (self.last_failure_ns - self.first_failure_ns) / NS_PER_S
        return TargetUnreachableError(
            unreachable_message(spec, self.attempts, self.sample, f" in {spent_s:.2f} s")
        )


def _answered_no(exc: BaseException) -> bool:
    if isinstance(exc, ssl.SSLError):
        return True
    return isinstance(exc, OSError) and exc.errno in _ANSWERED_NO


def unreachable_message(spec: LoadSpec, attempts: int, sample: str, spent: str = "") -> str:
    """Why no connection to the target succeeded, and what to do, in one line; ``sample``
    is a connect error's sample (see :func:`describe_connect_error`)."""
    return (
        f"no connection to {spec.url} succeeded ({attempts:,} attempts{spent}; {sample}):"
        f" {_unreachable_hint(spec, sample)}"
    )


def _unreachable_hint(spec: LoadSpec, sample: str) -> str:
    if "TLS handshake failed" not in sample:
        return "is the server running and listening on that address?"
    if NOT_TLS in sample:
        return "the port speaks plain HTTP, not TLS: use http:// for it, not https://"
    if "CERTIFICATE" in sample.upper() and spec.verify_tls:
        return "for a self-signed test server pass verify_tls=False (CLI: --no-verify-tls)"
    return "the server and this client agree on no TLS settings: check the server's TLS setup"


def numeric_address(host: str, port: int) -> tuple[Any, ...] | None:
    """``(host, port)`` as a socket address when ``host`` is an IP address, else None (a
    name may resolve to several addresses, which the loop's connect tries in turn)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return (host, port) if family == socket.AF_INET else (host, port, 0, 0)
    return None
