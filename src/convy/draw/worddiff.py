"""Word diff: two agent answers, each a Markdown tree (transcript.AgentMarkdown), with the words that
differ between them marked — `del` in the first (the baseline's), `ins` in the second (this run's) —
by difflib's SequenceMatcher over word tokens, whitespace kept as tokens of its own so the text reads
as it was (window.MarkdownHtml draws such a tree with the marks allowed, every string escaped).

Nothing an agent wrote becomes markup: the marks are nodes of our tag names in the tree, its text
stays text (escaped by markup.Tag)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

import msgspec

TOKENS = re.compile(r"\s+|[^\s]+")
"""A word (a run of non-blanks, its punctuation with it) or a run of whitespace."""

MOST = 4_000
"""The most tokens of one answer compared word by word: beyond, the whole answer is marked (the
matcher's time grows with the product of the two lengths)."""

MARKS = frozenset({"del", "ins"})
"""The tag names of the marks."""


class Leaves(msgspec.Struct, frozen=True):
    """A Markdown tree's text, as the tokens of its strings in reading order (a code block's text
    too)."""

    tree: list[object]

    def tokens(self) -> list[str]:
        found: list[str] = []
        self.walk(self.tree, found)
        return found

    def walk(self, nodes: list[object], found: list[str]) -> None:
        for node in nodes:
            if isinstance(node, str):
                found.extend(TOKENS.findall(node))
            elif isinstance(node, list) and node and isinstance(node[0], str):
                self.walk(node[1:], found)


class Marking:
    """A tree rebuilt with its changed tokens wrapped in `mark` nodes: `changed` says, for each
    token in reading order, whether it is marked."""

    def __init__(self, mark: str, changed: list[bool]) -> None:
        self.mark = mark
        self.changed = changed
        self.at = 0

    def nodes(self, nodes: list[object]) -> list[object]:
        found: list[object] = []
        for node in nodes:
            if isinstance(node, str):
                found.extend(self.text(node))
            elif isinstance(node, list) and node and isinstance(node[0], str):
                found.append([node[0], *self.nodes(node[1:])])
        return found

    def text(self, text: str) -> list[object]:
        """A string as runs of unmarked text and marked nodes."""
        found: list[object] = []
        run: list[str] = []
        marked = False
        for token in TOKENS.findall(text):
            changed = self.changed[self.at] if self.at < len(self.changed) else False
            self.at += 1
            if run and changed != marked:
                found.append([self.mark, "".join(run)] if marked else "".join(run))
                run = []
            run.append(token)
            marked = changed
        if run:
            found.append([self.mark, "".join(run)] if marked else "".join(run))
        return found


class WordDiff(msgspec.Struct, frozen=True):
    """Two answers' trees: `before` (the baseline's) and `after` (this run's)."""

    before: list[object]
    after: list[object]

    def marked(self) -> tuple[list[object], list[object]]:
        """Both trees with their differing words marked: `del` in before, `ins` in after."""
        old = Leaves(self.before).tokens()
        new = Leaves(self.after).tokens()
        if len(old) > MOST or len(new) > MOST:
            gone, added = self.joined(old, [True] * len(old)), self.joined(new, [True] * len(new))
        else:
            gone, added = self.changes(old, new)
        return Marking("del", gone).nodes(self.before), Marking("ins", added).nodes(self.after)

    def changes(self, old: list[str], new: list[str]) -> tuple[list[bool], list[bool]]:
        """Which tokens of each side are not in the other (a blank between two changed words is
        changed too, so a changed phrase is one mark)."""
        gone, added = [False] * len(old), [False] * len(new)
        matcher = SequenceMatcher(None, old, new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op != "equal":
                gone[i1:i2] = [True] * (i2 - i1)
                added[j1:j2] = [True] * (j2 - j1)
        return self.joined(old, gone), self.joined(new, added)

    def joined(self, tokens: list[str], changed: list[bool]) -> list[bool]:
        found = list(changed)
        for at in range(1, len(tokens) - 1):
            if not found[at] and not tokens[at].strip() and found[at - 1] and found[at + 1]:
                found[at] = True
        for at, token in enumerate(tokens):
            if found[at] and not token.strip():
                before = found[at - 1] if at > 0 else False
                after = found[at + 1] if at + 1 < len(tokens) else False
                found[at] = before and after
        return found
