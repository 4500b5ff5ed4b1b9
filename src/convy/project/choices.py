"""The values a key of a file may take when it is a choice (a `Literal` of the record it is read
into), found by the path msgspec's error gives (`$.protocol`, `$.session.start.method`), so a
wrong one is said with every allowed one."""

from __future__ import annotations

import re

import msgspec

STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


class Choices(msgspec.Struct, frozen=True):
    """The allowed values at `path` (msgspec's `$…` form) in a record of `kind`."""

    kind: type
    path: str

    def allowed(self) -> tuple[str, ...]:
        """Every value allowed there, in declaration order ("" left out); empty when the key is no
        choice or the path is not found."""
        found = self.at(msgspec.inspect.type_info(self.kind), self.path.removeprefix("$"))
        return tuple(str(value) for value in self.values(found) if value != "")

    def said(self, text: str) -> str:
        """msgspec's `Invalid enum value 'x'` with the allowed values; `text` as it is otherwise."""
        allowed = self.allowed()
        wrong = re.fullmatch(r"Invalid enum value (.*)", text)
        if wrong is None or not allowed:
            return text
        return f"{wrong.group(1)} is not one of the allowed values: {', '.join(allowed)}"

    def at(self, kind: msgspec.inspect.Type, rest: str) -> msgspec.inspect.Type | None:
        step = STEP.match(rest)
        if not rest:
            return kind
        if step is None:
            return None
        for option in self.options(kind):
            match option, step.group(1):
                case msgspec.inspect.StructType(fields=fields), str(name):
                    inner = next((field.type for field in fields if field.encode_name == name), None)
                    if inner is not None:
                        return self.at(inner, rest[step.end() :])
                case msgspec.inspect.DictType(value_type=inner), str():
                    return self.at(inner, rest[step.end() :])
                case (
                    (
                        msgspec.inspect.ListType(item_type=inner)
                        | msgspec.inspect.VarTupleType(item_type=inner)
                    ),
                    None,
                ):
                    return self.at(inner, rest[step.end() :])
        return None

    def options(self, kind: msgspec.inspect.Type) -> tuple[msgspec.inspect.Type, ...]:
        if isinstance(kind, msgspec.inspect.UnionType):
            return tuple(kind.types)
        return (kind,)

    def values(self, kind: msgspec.inspect.Type | None) -> tuple[object, ...]:
        if kind is None:
            return ()
        return tuple(
            value
            for option in self.options(kind)
            if isinstance(option, msgspec.inspect.LiteralType)
            for value in option.values
        )
