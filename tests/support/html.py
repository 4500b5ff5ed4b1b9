"""A page parsed into elements, for tests to find what a reader sees."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"br", "hr", "input", "meta", "link"}


class Node:
    """An element of a parsed page: its tag, attributes and children (elements and texts)."""

    def __init__(self, tag: str, attributes: dict[str, str | None]) -> None:
        self.tag, self.attributes = tag, attributes
        self.children: list[Node | str] = []

    def classes(self) -> set[str]:
        return set((self.attributes.get("class") or "").split())

    def all(self, tag: str = "", name: str = "") -> list[Node]:
        """Every element under this one with that tag and class (either empty: any)."""
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if (not tag or child.tag == tag) and (not name or name in child.classes()):
                    found.append(child)
                found.extend(child.all(tag, name))
        return found

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def by_id(self, wanted: str) -> Node:
        (found,) = [n for n in self.all() if n.attributes.get("id") == wanted]
        return found


class Tree(HTMLParser):
    """A page parsed into Nodes."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.path = [self.root]
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.path[-1].children.append(node)
        if tag not in VOID:
            self.path.append(node)

    def handle_endtag(self, tag: str) -> None:
        while len(self.path) > 1 and self.path.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.path[-1].children.append(data)


def parsed(page: str) -> Node:
    return Tree(page).root
