"""The HTML of the pages, made here: text that is HTML already, and elements of ours — a tag name
and attributes chosen in this code, children that are escaped text or HTML.

Text never becomes HTML by accident: a `str` child is escaped (`&`, `<`, `>`), an attribute's value
too (and `"`, `'`), only Html is written as it is, and Html is made only by Tag. Tag and attribute names are
never taken from what a run recorded."""

from __future__ import annotations

import html

import msgspec

from convy.draw.untrusted import CLEANER

VOID = frozenset({"br", "hr", "input", "meta", "link"})
"""HTML elements without content or end tag."""

Value = str | int | float | bool | None
"""An attribute's value: text (escaped), a number, True (the attribute alone) or False/None
(left out)."""


class Html(str):
    """Text that is HTML already, made by Tag of our tag names and escaped text: written as it is.
    Pieces of Html joined (`Html("".join(pieces))`) are Html too."""

    __slots__ = ()


class Tag(msgspec.Struct, frozen=True):
    """An element of ours: its tag `name` and `attributes`, as this code chose them."""

    name: str
    attributes: dict[str, Value] = msgspec.field(default_factory=dict)

    def of(self, *children: str | Html) -> Html:
        """The element with these children: a `str` escaped, Html as it is."""
        start = f"<{self.name}{self.written()}>"
        if self.name in VOID:
            return Html(start)
        # one join of the start, the children and the end: a page's text is copied once a level
        parts = [start]
        escape, cleaned = html.escape, CLEANER.cleaned
        parts.extend(
            child if isinstance(child, Html) else escape(cleaned(child), quote=False) for child in children
        )
        parts.append(f"</{self.name}>")
        return Html("".join(parts))

    def written(self) -> str:
        if not self.attributes:
            return ""
        parts = []
        for name, value in self.attributes.items():
            if value is None or value is False:
                continue
            if value is True:
                parts.append(f" {name}")
            elif isinstance(value, float):
                parts.append(f' {name}="{value:.6g}"')
            else:
                parts.append(f' {name}="{ATTRIBUTES.escaped(str(value))}"')
        return "".join(parts)


class Attributes:
    """Attribute values escaped, a short value escaped once (a page's class names repeat by the
    thousand); at most `most` kept, the oldest forgotten first."""

    SHORT = 100
    """The longest value kept (class names, ids): a longer one is escaped each time."""

    def __init__(self, most: int = 4096) -> None:
        self._most = most
        self._escaped: dict[str, str] = {}

    def escaped(self, value: str) -> str:
        found = self._escaped.get(value)
        if found is None:
            found = html.escape(CLEANER.cleaned(value))
            if len(value) > self.SHORT:
                return found
            if len(self._escaped) >= self._most:
                del self._escaped[next(iter(self._escaped))]
            self._escaped[value] = found
        return found


ATTRIBUTES = Attributes()
"""The attribute values of the pages this process draws."""


class Pill(msgspec.Struct, frozen=True, kw_only=True):
    """A short coloured label: a status, an outcome."""

    text: str
    tone: str

    def html(self) -> Html:
        return Tag("span", {"class": f"pill tone-{self.tone}"}).of(self.text)


class FactList(msgspec.Struct, frozen=True, kw_only=True):
    """Facts in a row, such as a run's start and status (`kind` a class that sets their look)."""

    facts: tuple[str, ...]
    kind: str = ""

    def html(self) -> Html:
        return Tag("ul", {"class": f"facts {self.kind}".strip()}).of(*(Tag("li").of(f) for f in self.facts))
