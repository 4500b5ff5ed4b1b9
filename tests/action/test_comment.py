"""StickyComment against the local GitHub: one comment per agent and pull request, found by its
marker among all pages, updated in place (or left alone), created when absent; others' comments are
never edited; a read-only token and an over-long body degrade instead of failing."""

from __future__ import annotations

import httpx
import pytest

from convy_action.github.rest import GitHub
from convy_action.github.retries import Retries
from convy_action.publish.comment import CUT, LIMIT, CommentBody, Marked, Posted, StickyComment, Unposted
from tests.servers.github import BOT_LOGIN, FakeGitHub, Token

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)
MARKER = "<!-- convy-action:support -->"
PR = 7


@pytest.fixture
def github(fake: FakeGitHub, client: httpx.Client) -> GitHub:
    return GitHub(fake.api, fake.token, fake.repository, client, FAST)


def requests(fake: FakeGitHub, method: str) -> list[str]:
    return [seen.path for seen in fake.seen if seen.method == method]


def on_pr(fake: FakeGitHub) -> list[str]:
    return [c.body for c in fake.comments if c.issue == PR]


def test_the_first_put_creates_the_comment_with_its_marker_first(fake: FakeGitHub, github: GitHub) -> None:
    posted = StickyComment(github, PR, "support").put(f"{MARKER}\n## convy: pass")
    assert isinstance(posted, Posted) and posted.how == "created"
    assert on_pr(fake) == [f"{MARKER}\n## convy: pass"]
    assert posted.url.endswith(f"/pull/{PR}#issuecomment-{posted.id}")
    assert fake.comments[0].user["login"] == BOT_LOGIN


def test_a_body_without_the_marker_gets_it(fake: FakeGitHub, github: GitHub) -> None:
    StickyComment(github, PR, "support").put("## convy: pass")
    assert on_pr(fake) == [f"{MARKER}\n## convy: pass"]


def test_the_next_put_edits_the_same_comment(fake: FakeGitHub, github: GitHub) -> None:
    sticky = StickyComment(github, PR, "support")
    first = sticky.put(f"{MARKER}\nfirst")
    second = sticky.put(f"{MARKER}\nsecond")
    assert isinstance(first, Posted) and isinstance(second, Posted)
    assert (second.how, second.id) == ("updated", first.id)
    assert on_pr(fake) == [f"{MARKER}\nsecond"]
    assert len(requests(fake, "POST")) == 1 and len(requests(fake, "PATCH")) == 1


def test_an_unchanged_body_is_not_sent_again(fake: FakeGitHub, github: GitHub) -> None:
    sticky = StickyComment(github, PR, "support")
    sticky.put(f"{MARKER}\nsame")
    again = sticky.put(f"{MARKER}\nsame")
    assert isinstance(again, Posted) and again.how == "unchanged"
    assert requests(fake, "PATCH") == []


def test_each_agent_has_its_own_comment(fake: FakeGitHub, github: GitHub) -> None:
    StickyComment(github, PR, "support").put("support's")
    StickyComment(github, PR, "billing").put("billing's")
    StickyComment(github, PR, "support").put("support's again")
    assert sorted(on_pr(fake)) == sorted(
        [f"{MARKER}\nsupport's again", f"{Marked('billing').line}\nbilling's"]
    )


def test_ours_on_the_second_page_is_updated_not_duplicated(fake: FakeGitHub, github: GitHub) -> None:
    for number in range(110):
        fake.comment(PR, f"review comment {number}", login="reviewer")
    ours = fake.comment(PR, f"{MARKER}\nold", login=BOT_LOGIN)
    for number in range(15):
        fake.comment(PR, f"later comment {number}", login="reviewer")
    posted = StickyComment(github, PR, "support").put(f"{MARKER}\nnew")
    assert isinstance(posted, Posted) and (posted.how, posted.id) == ("updated", ours.id)
    assert len(on_pr(fake)) == 126 and on_pr(fake).count(f"{MARKER}\nnew") == 1
    assert any("page=2" in path for path in requests(fake, "GET"))


def test_a_marked_comment_of_someone_else_is_never_edited(fake: FakeGitHub, github: GitHub) -> None:
    theirs = fake.comment(PR, f"{MARKER}\nquoted by a person", login="mallory")
    posted = StickyComment(github, PR, "support").put(f"{MARKER}\nours")
    assert isinstance(posted, Posted) and posted.how == "created" and posted.id != theirs.id
    assert theirs.body == f"{MARKER}\nquoted by a person"


def test_a_personal_token_finds_the_comment_of_its_own_login(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.tokens["ghp_personal"] = Token(login="octocat", id=583231, app=False)
    mine = fake.comment(PR, f"{MARKER}\nmine before", login="octocat")
    github = GitHub(fake.api, "ghp_personal", fake.repository, client, FAST)
    posted = StickyComment(github, PR, "support").put(f"{MARKER}\nmine after")
    assert isinstance(posted, Posted) and (posted.how, posted.id) == ("updated", mine.id)
    assert any(path == "/user" for path in requests(fake, "GET"))


def test_a_read_only_token_is_unposted_and_forbidden(fake: FakeGitHub, github: GitHub) -> None:
    fake.tokens[fake.token].write = False
    unposted = StickyComment(github, PR, "support").put("text")
    assert isinstance(unposted, Unposted) and unposted.forbidden
    assert "Resource not accessible by integration" in unposted.reason
    assert on_pr(fake) == []


def test_a_body_over_github_s_limit_is_cut_with_a_note_and_posted(fake: FakeGitHub, github: GitHub) -> None:
    row = "| scenario | 0/3 | 😀 a claim that failed |\n"
    posted = StickyComment(github, PR, "support").put(MARKER + "\n" + row * 4000)
    assert isinstance(posted, Posted) and posted.how == "created"
    (body,) = on_pr(fake)
    assert body.startswith(MARKER + "\n| scenario") and body.endswith(CUT)
    assert len(body.encode("utf-16-le")) // 2 <= LIMIT
    assert body.removesuffix(CUT).endswith("failed |")


def test_body_keeps_short_text_as_it_is() -> None:
    assert CommentBody("x", Marked("a")).final() == "<!-- convy-action:a -->\nx"
    with pytest.raises(ValueError):
        CommentBody("x", Marked("a"), limit=10)


def test_a_secondary_rate_limit_is_waited_out_and_the_comment_posted_once(
    fake: FakeGitHub, github: GitHub
) -> None:
    fake.fail(
        403,
        method="POST",
        path="/comments",
        message="You have exceeded a secondary rate limit",
        retry_after="1",
    )
    fake.fail(429, method="GET", path="/comments", retry_after="0")
    posted = StickyComment(github, PR, "support").put("text")
    assert isinstance(posted, Posted) and posted.how == "created"
    assert len(on_pr(fake)) == 1 and len(requests(fake, "POST")) == 2


def test_a_rate_limit_that_does_not_end_gives_up_after_the_bounded_tries(
    fake: FakeGitHub, github: GitHub
) -> None:
    fake.fail(429, times=100, method="GET", path="/comments", retry_after="0")
    unposted = StickyComment(github, PR, "support").put("text")
    assert isinstance(unposted, Unposted) and not unposted.forbidden and "429" in unposted.reason
    assert len(requests(fake, "GET")) == FAST.attempts and on_pr(fake) == []
