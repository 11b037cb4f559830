"""Where a load goes: URL and ``HOST:PORT`` parsing, and the loopback guard.

The guard runs before any socket exists and never resolves a name it has not already
decided to allow, so a typo'd production host is refused without a single packet (not even
a DNS query) leaving the machine.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from pytest_netbench._errors import RemoteTargetError, SpecError

_LOCAL_NAMES = ("localhost", "localhost.", "ip6-localhost", "ip6-loopback")


@dataclass(frozen=True, slots=True)
class HttpTarget:
    scheme: str
    host: str
    port: int
    target: str  # origin-form path + query


def parse_http_url(url: str) -> HttpTarget:
    """``http://`` or ``https://host[:port]/path?query`` as a target."""
    return parse_url(url, ("http", "https"), "use http or https")


def parse_url(url: str, schemes: tuple[str, str], accepted: str) -> HttpTarget:
    """``url`` as a target: its scheme one of ``schemes`` (the plain one, then the one over
    TLS, whose default port is 443); ``accepted`` says which to a URL with another."""
    plain, secure = schemes
    if "://" not in url:
        raise SpecError(f"target {url!r} has no scheme: write it as {plain}://{url}")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL", characters NFKC turns into others
        raise SpecError(f"target {url!r} is not a URL: {exc}") from None
    if parts.scheme not in schemes:
        raise SpecError(f"unsupported scheme {parts.scheme!r} in {url!r}: {accepted}")
    try:
        host = parts.hostname  # ValueError for a bracketed host that is no IP address
    except ValueError as exc:
        raise SpecError(f"bad host in {url!r}: {exc}") from None
    if not host:
        raise SpecError(f"target {url!r} has no host")
    try:
        port = parts.port or (443 if parts.scheme == secure else 80)
    except ValueError as exc:
        raise SpecError(f"bad port in {url!r}: {exc}") from None
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return HttpTarget(parts.scheme, host, port, target)


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[v6]:PORT``, as the echo command takes it."""
    host, sep, port = text.rpartition(":")
    # ASCII digits, few enough for int(): str.isdigit() also takes "²", which int() refuses.
    if not sep or not (port.isascii() and port.isdigit()) or len(port) > 5:
        raise SpecError(f"expected HOST:PORT, got {text!r} (for example 127.0.0.1:9000)")
    return host.strip("[]"), int(port)


def is_loopback_literal(host: str) -> bool | None:
    """True/False for an IP literal, None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return None


def guard_target(host: str, *, allow_remote: bool) -> None:
    """Refuse anything but loopback unless the caller said otherwise. Sends nothing."""
    if allow_remote:
        return
    literal = is_loopback_literal(host)
    if literal is True:
        return
    if literal is None and host.lower() in _LOCAL_NAMES:
        # Names in /etc/hosts only; a resolver lookup is still checked address by address.
        for family, *_, addr in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP):
            if (
                family in (socket.AF_INET, socket.AF_INET6)
                and not ipaddress.ip_address(str(addr[0]).split("%")[0]).is_loopback
            ):
                break
        else:
            return
    raise RemoteTargetError(
        f"refusing to load {host!r}: only loopback targets (127.0.0.0/8, ::1, localhost) are"
        " allowed by default, so nobody load-tests a production host by a typo. Pass"
        " allow_remote=True (CLI: --allow-remote) if you really mean it."
    )
