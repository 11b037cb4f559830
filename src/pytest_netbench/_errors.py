"""Every error the library raises on purpose; each message says what was wrong and what to do."""

from __future__ import annotations

import traceback

from pytest_netbench._public import publish


class NetbenchError(Exception):
    """Base of every deliberate pytest-netbench error."""


class SpecError(NetbenchError, ValueError):
    """The load was asked for with arguments that cannot work."""


class FeederExhausted(NetbenchError):
    """A feeder told to fail when it runs out (``on_end="error"``) ran out."""


class EngineFault(NetbenchError):
    """The load engine itself failed (a bug in pytest-netbench, not in the server)."""


class FlowError(NetbenchError):
    """A user flow raised on every session, so the load stopped early (the flow's own
    exception is the ``__cause__``): a bug in the flow, not a fault of the server.

    It crosses processes (a worker process's pipe, a Dask worker's result) with the flow's
    traceback as text: there, the ``__cause__`` is a :class:`FlowTraceback` that prints it.
    """

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        cause = self.__cause__
        if isinstance(cause, FlowTraceback) or cause is None:
            text = str(cause or "")
        else:
            text = _FROM_WORKER + "".join(traceback.format_exception(cause)).rstrip()
        return _flow_error, (str(self), text)


class FlowTraceback(Exception):
    """The flow's exception as the worker process that ran the flow printed it, traceback
    included (a traceback cannot cross processes): a :class:`FlowError`'s ``__cause__``
    when the flow ran in a worker process or on a Dask worker."""


_FROM_WORKER = "the flow's exception, in the worker that ran it:\n"


def _flow_error(message: str, flow_traceback: str) -> FlowError:
    """A :class:`FlowError` unpickled: its flow's traceback (if any) as its cause."""
    error = FlowError(message)
    if flow_traceback:
        error.__cause__ = FlowTraceback(flow_traceback)
    return error


class RemoteTargetError(NetbenchError):
    """A target outside loopback was given without allow_remote."""


class TargetUnreachableError(NetbenchError):
    """Not a single connection to the target could be made."""


class ResourceLimitError(NetbenchError):
    """The generator cannot get the file descriptors or ports the load needs."""


class ServerError(NetbenchError):
    """Base of the errors about a server under test."""


class ServerStartupError(ServerError):
    """The server exited, or did not become ready, during start-up."""


class ServerCrashed(ServerError):
    """The server died after it had become ready."""


class PortInUseError(ServerError):
    """The port asked for is already taken by another process."""


class InterpreterNotFound(ServerError):
    """The Python interpreter asked for (e.g. pypy3) is not installed."""


class ToolchainMissing(ServerError):
    """A catalog server needs a compiler or runtime this machine lacks."""


class BuildFailed(ServerError):
    """A catalog server's build failed; the message carries the build output."""


class SecondToolError(NetbenchError):
    """Base of the errors about a second load tool (wrk, ab) in a crosscheck."""


class ToolNotInstalled(SecondToolError):
    """The second tool of a crosscheck is not installed; the message names its package."""


class ToolFailed(SecondToolError):
    """The second tool exited with an error, or printed output that cannot be read."""


publish(globals())
