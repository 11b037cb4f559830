"""The message of a WebSocket load whose answers carry an id (``answer="id"``): a JSON
object cut once around the id's place, so each send only joins bytes (see ``ws_ids``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

# The id's place in the template while it is cut (a string no JSON text can hold unescaped).
_MARK = "\x00netbench-id\x00"


@dataclass(frozen=True, slots=True)
class IdTemplate:
    """A message with an id in ``field``: its JSON text before and after the id."""

    field: str
    before: bytes
    after: bytes

    @classmethod
    def from_message(cls, message: str, field: str) -> IdTemplate:
        """The template of ``message``, a JSON object (its ``field``, if there, is
        replaced by each send's id). Raises ValueError saying what is wrong."""
        try:
            document = json.loads(message)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser
            raise ValueError(f"with answer='id' the message must be JSON: {exc}") from None
        if not isinstance(document, dict):
            raise ValueError(
                f"with answer='id' the message must be a JSON object, got {message[:40]!r}"
            )
        document[field] = _MARK
        text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
        before, after = text.split(json.dumps(_MARK))
        return cls(field, before.encode("utf-8"), after.encode("utf-8"))

    def payload(self, message_id: int) -> bytes:
        return self.before + str(message_id).encode("ascii") + self.after
