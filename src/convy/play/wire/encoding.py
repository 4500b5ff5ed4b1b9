"""A filled request body as it goes on the wire: JSON, or form-encoded
(application/x-www-form-urlencoded) for the agent servers that take form fields."""

from __future__ import annotations

from urllib.parse import urlencode

import msgspec

from convy.play.wire.spec import Format

CONTENT_TYPES: dict[Format, str] = {"json": "application/json", "form": "application/x-www-form-urlencoded"}


class Encoded(msgspec.Struct, frozen=True):
    """`body` (filled in) sent in `format`. A form's fields are the body's keys: a string is sent as
    it is, null leaves its field out, and any other value (a number, true/false, a list, an object)
    goes as its JSON text."""

    body: object
    format: Format = "json"

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.format]

    def content(self) -> bytes:
        if self.format == "json":
            return msgspec.json.encode(self.body)
        if not isinstance(self.body, dict):
            raise TypeError("a form body is a mapping of fields")
        fields = [
            (str(key), value if isinstance(value, str) else msgspec.json.encode(value).decode())
            for key, value in self.body.items()
            if value is not None
        ]
        return urlencode(fields).encode("ascii")
