"""The HTML of the pages, made here: text that is HTML already, and elements of ours — a tag name
and attributes chosen in this code, children that are escaped text or HTML.

Text never becomes HTML by accident: a `str` child is escaped (`&`, `<`, `>`), an attribute's value
too (and `"`, `'`), only Html is written as it is, and Html is made only by Tag. Tag and attribute names are
never taken from what a run recorded."""

from __future__ import annotations

import html

import msgspec

from convy.draw.untrusted import Untrusted

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
        parts.extend(
            child if isinstance(child, Html) else html.escape(Untrusted(text=child).page(), quote=False)
            for child in children
        )
        parts.append(f"</{self.name}>")
        return Html("".join(parts))

    def written(self) -> str:
        parts = []
        for name, value in self.attributes.items():
            if value is None or value is False:
                continue
            if value is True:
                parts.append(f" {name}")
            elif isinstance(value, float):
                parts.append(f' {name}="{value:.6g}"')
            else:
                parts.append(f' {name}="{html.escape(Untrusted(text=str(value)).page())}"')
        return "".join(parts)


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
