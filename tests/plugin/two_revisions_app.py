"""A WSGI app in two revisions (tests/plugin/test_profile_ab.py): HEAD (SLOW=1) also runs
audit_log for each request, BASE does not."""

import os

SLOW = os.environ.get("SLOW") == "1"


def render_page(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def audit_log(n):
    acc = 0
    for i in range(n):
        acc ^= (i * 2654435761) & 0xFFFF
    return acc


def app(environ, start_response):
    value = render_page(8000)
    if SLOW:
        value += audit_log(6000)
    body = str(value).encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]
