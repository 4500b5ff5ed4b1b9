"""The one sticky comment of an agent (and comment key) on a pull request: found among all the pull
request's comments by its hidden first line, edited in place (or left alone when unchanged), created
when absent unless `comment-when` holds a new one back.

The hidden line is `<!-- convy-action:<agent> -->` (`<!-- convy-action:<agent>:<key> -->` with a
comment key), on a comment written by the workflow's bot or the token's own login. A refusal (a
fork's read-only token: 403) is a comment unposted with the reason, never a crash. Others' comments
are never touched."""

from __future__ import annotations

from typing import Literal, Protocol

import msgspec

from convy import Comparison, GateDecision
from convy.runs import Marker
from convy.tools import Tagged
from convy_action.github.rest import GitHub, GitHubError, IssueComment

BOT = "github-actions[bot]"
MARKER_START = "<!-- convy-action:"
QUIET = ("unchanged", "not played", "not_played")
"""Scenario statuses that are no change for `comment-when: changed` (one not played is no news)."""
LIMIT = 65_536
"""GitHub's largest comment body, in characters."""
CUT = (
    "\n\n---\n*The comment was cut here: it is longer than GitHub allows. "
    "The job summary and the run's artifact have all of it.*\n"
)


class Posted(Tagged, frozen=True, kw_only=True, tag="posted"):
    """The comment is on the pull request: created, updated, or already as it should be."""

    id: int
    url: str
    how: Literal["created", "updated", "unchanged"]


class Unposted(Tagged, frozen=True, kw_only=True, tag="unposted"):
    """The comment could not be written; `forbidden` when the token may not (a fork's pull request)."""

    reason: str
    forbidden: bool = False


class Skipped(Tagged, frozen=True, kw_only=True, tag="skipped"):
    """No comment was meant to be written (not a pull request, `comment: false`, a dry run)."""

    why: str


class Box(Protocol):
    """Where the comment goes: StickyComment, or a stand-in of dry.py."""

    def put(self, text: str) -> Posted | Unposted | Skipped: ...


class Marked(msgspec.Struct, frozen=True):
    """The comments of one agent and comment key, told by their hidden first line
    (convy.draw.markdown's Marker: `<!-- convy-action:support -->`, `<!-- convy-action:support:eu -->`)."""

    agent: str
    key: str = ""

    @property
    def line(self) -> str:
        return Marker(agent=self.agent, key=self.key).text()

    def marks(self, body: str) -> bool:
        return body.lstrip().partition("\n")[0].strip() == self.line

    def marked(self, body: str) -> str:
        """`body` with this marker as its first line, in place of any convy marker it starts with."""
        first, _, rest = body.lstrip().partition("\n")
        if first.strip() == self.line:
            return body
        if first.strip().startswith(MARKER_START) and first.strip().endswith("-->"):
            return f"{self.line}\n{rest}"
        return f"{self.line}\n{body}"


class CommentWhen(msgspec.Struct, frozen=True):
    """The `comment-when` setting: when a new comment may be created — `always`, `changed` (the
    verdict is not pass, or some scenario is not unchanged) or `failed` (the verdict is fail or
    inconclusive). An existing comment is updated whatever it says."""

    when: str = "always"

    def held_back(self, comparison: Comparison, decision: GateDecision) -> str:
        """Why no new comment is created for this comparison; "" when one may be."""
        verdict = decision.verdict
        match self.when:
            case "failed" if verdict == "pass":
                return "comment-when: failed, and the gate passed"
            case "changed" if verdict == "pass" and all(s.status in QUIET for s in comparison.scenarios):
                return "comment-when: changed, the gate passed and no scenario changed"
            case _:
                return ""


class CommentBody(msgspec.Struct, frozen=True):
    """A comment's text, starting with its marker and under `limit` characters (cut with a note)."""

    text: str
    marker: Marked
    limit: int = LIMIT

    def __post_init__(self) -> None:
        if self.limit <= len(self.marker.line) + len(CUT):
            raise ValueError("the limit leaves no room for the comment")

    def final(self) -> str:
        """The text to post: marked, and cut with a note when longer than the limit (counted in
        UTF-16 units, which is never less than in characters)."""
        text = self.marker.marked(self.text)
        if self.units(text) <= self.limit:
            return text
        room = self.limit - self.units(CUT)
        kept = text[:room]
        while self.units(kept) > room:
            kept = kept[: -max(1, (self.units(kept) - room) // 2)]
        return (kept[: kept.rfind("\n")] if "\n" in kept else kept) + CUT

    def units(self, text: str) -> int:
        return len(text.encode("utf-16-le")) // 2


class StickyComment(msgspec.Struct, frozen=True):
    """The comment of `agent` (and comment `key`) on pull request `number`, through `github`.
    `held_back` says why no new comment may be created (comment-when); "" when one may."""

    github: GitHub
    number: int
    agent: str
    limit: int = LIMIT
    key: str = ""
    held_back: str = ""

    def put(self, text: str) -> Posted | Unposted | Skipped:
        """Update the comment with `text` (its marker as first line), or create it when absent and
        not held back."""
        marker = Marked(self.agent, self.key)
        body = CommentBody(text, marker, self.limit).final()
        try:
            found = self.ours([c for c in self.github.comments(self.number) if marker.marks(c.body)])
            if found is None and self.held_back:
                return Skipped(why=f"{self.held_back}: no comment is created")
            if found is None:
                made = self.github.post(self.number, body)
                return Posted(id=made.id, url=made.html_url, how="created")
            if found.body == body:
                return Posted(id=found.id, url=found.html_url, how="unchanged")
            edited = self.github.edit(found.id, body)
            return Posted(id=edited.id, url=edited.html_url, how="updated")
        except GitHubError as error:
            return Unposted(reason=str(error), forbidden=error.status == 403)

    def ours(self, marked: list[IssueComment]) -> IssueComment | None:
        """The oldest marked comment written by the workflow's bot, else by the token's own login
        (asked only when some other author's comment carries the marker)."""
        authors = [c.user.login if c.user is not None else "" for c in marked]
        if BOT in authors:
            return marked[authors.index(BOT)]
        if not marked:
            return None
        login = self.github.login()
        return next((c for c, a in zip(marked, authors, strict=True) if login and a == login), None)
