"""What a load was sent to, in words, for every heading that names it: ``GET
http://127.0.0.1:8080/items``, or for a mix its server, its request kinds and their
order, so no heading names a request (``GET /``) the load never sent."""

from __future__ import annotations

from pytest_netbench._model import LoadSpec


def describe_target(spec: LoadSpec) -> str:
    """``GET http://127.0.0.1:8080/items``; ``http://127.0.0.1:8080, a mix of 3 requests in
    turn (list, search, order)``; templates add ``, filled from feeders id (seed 0)``; a
    gRPC load: ``gRPC /pkg.Service/Method at http://127.0.0.1:50051``."""
    if spec.kind != "http":
        return spec.url
    if spec.grpc_method is not None:
        return f"gRPC {spec.grpc_method} at {spec.url.removesuffix(spec.target)}"
    if not spec.mix:
        text = f"{spec.method} {spec.url}"
    else:
        order = "in turn" if spec.mix_order == "cycle" else "by weight"
        kinds = ", ".join(request.label for request in spec.mix)
        count = f"{len(spec.mix)} request" + ("" if len(spec.mix) == 1 else "s")
        text = f"{spec.url.removesuffix(spec.target)}, a mix of {count} {order} ({kinds})"
    if spec.feeders:
        names = ", ".join(name for name, _ in spec.feeders)
        text += f", filled from feeders {names} (seed {spec.seed})"
    return text
