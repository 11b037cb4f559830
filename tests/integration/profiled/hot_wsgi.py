"""A WSGI app whose requests spend their CPU in one named function (profile tests)."""


def render_page(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def app(environ, start_response):  # type: ignore[no-untyped-def]
    body = str(render_page(20_000)).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
