"""Untrusted text rendered by a markdown parser: nothing of it may become HTML, a link, an image, a
mention, a reference, an extra table column, a block of its own or a workflow command — and what it
said still shows."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from convy.draw.untrusted import Untrusted

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])

JOINER = "\u200b"

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</details>",
    "</details>\n\n<script>alert(1)</script>",
    "@org/team",
    "cc @user, @org/team and @someone-else!",
    "![](http://x)",
    "![alt](http://x/a.png) and ![][ref]\n\n[ref]: http://x",
    "[a](javascript:alert(1))",
    "[a](http://evil.example 'title')",
    "http://evil.example",
    "see https://evil.example/path?q=1|2, or www.evil.example.",
    "HTTPS://EVIL.EXAMPLE WwW.evil.example mailto:a@b.c xmpp:a@b.c",
    "<http://evil.example> <a@b.example>",
    "me@evil.example",
    "|",
    "a | b || c \\| d \\\\| e",
    "`",
    "``` fence",
    "`code` and ``double `tick``",
    "`http://a`b`",
    "``http://x``",
    "text\\",
    "http://x\\",
    "a\\`http://x`",
    "fixes #12 and owner/repo#34",
    "# heading",
    "- item",
    "+ item",
    "1. first",
    "2) second",
    "> quote",
    "---",
    "***",
    "    indented code",
    "[ ] task",
    "*emphasis* _too_ **strong** ~~gone~~",
    "$x^2$ and $$\\frac{1}{2}$$",
    "&lt;b&gt; &amp; &#64;user &#x40;user &quot;",
    "line\nbreak\r\nand\rreturn\u2028separator",
    "tab\there",
    "nul\x00 esc\x1b[31m bell\x07 del\x7f nel\x85",
    "bidi \u202eevil\u202c \u2066x\u2069",
    "::set-output name=x::y",
    "  ::error::bad\n##[warning]w",
    "\ufeff::error::bom\n\u200b::x\n \u2060##[group]g\n\n\n  \t::y",
    "",
    "   ",
]


def flat(tokens: list[Token]) -> list[Token]:
    """Every token, children included."""
    every: list[Token] = []
    for token in tokens:
        every.append(token)
        every.extend(flat(token.children or []))
    return every


def visible(tokens: list[Token]) -> str:
    """What a reader sees of the inline tokens, without the joiners."""
    return "".join(t.content for t in flat(tokens) if t.type in ("text", "code_inline")).replace(JOINER, "")


def cleaned(text: str) -> str:
    """The text with its line ends as \\n, control characters but blanks and bidirectional overrides as
    U+FFFD."""
    return "".join(
        "\ufffd"
        if (ord(c) < 32 and c not in "\t\n\v\f")
        or 0x7F <= ord(c) < 0xA0
        or 0x202A <= ord(c) <= 0x202E
        or 0x2066 <= ord(c) <= 0x2069
        else c
        for c in text.replace("\r\n", "\n").replace("\r", "\n")
    )


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected(text: str, limit: int) -> str:
    """The text a reader should see on one line: cleaned, blanks and line ends as single spaces, cut to
    the limit with `…`."""
    return cut(" ".join(cleaned(text).split()), limit)


def assert_inert(tokens: list[Token]) -> None:
    """No HTML, link, image, emphasis, mention, reference or bare URL in what was parsed."""
    for token in flat(tokens):
        assert token.type not in (
            "html_inline",
            "html_block",
            "link_open",
            "image",
            "em_open",
            "strong_open",
            "s_open",
            "heading_open",
            "blockquote_open",
            "hr",
            "code_block",
            "fence",
        )
        if token.type == "text":
            assert not re.search("@[A-Za-z0-9]", token.content), token.content
            assert not re.search("#[0-9]", token.content), token.content
            assert not re.search(r"://|www\.|mailto:|xmpp:", token.content, re.IGNORECASE), token.content


def rendered_cell(cell: str) -> list[Token]:
    tokens = MARKDOWN.parse(f"| said | after |\n|---|---|\n| {cell} | end |\n")
    kinds = [t.type for t in tokens]
    assert kinds.count("th_open") == 2 and kinds.count("td_open") == 2, cell
    assert kinds.count("table_open") == 1 and kinds.count("tr_open") == 2
    last = [t for t in tokens if t.type == "inline"][-1]
    assert last.content == "end", cell
    return [t for t in tokens if t.type == "inline"][2:3]


def rendered_line(line: str) -> list[Token]:
    tokens = MARKDOWN.parse(f"- {line}\n- end\n")
    kinds = [t.type for t in tokens]
    assert kinds.count("list_item_open") == 2 and kinds.count("bullet_list_open") == 1, line
    inline = [t for t in tokens if t.type == "inline"]
    assert inline[-1].content == "end"
    return inline[:-1]


def check_cell(text: str, limit: int = 300) -> None:
    cell = Untrusted(text=text).cell(limit)
    assert "\n" not in cell
    assert len(cell) <= 6 * limit + 1
    tokens = rendered_cell(cell)
    assert_inert(tokens)
    assert visible(tokens).strip() == expected(text, limit).replace(JOINER, "").strip()


def check_line(text: str, limit: int = 300) -> None:
    line = Untrusted(text=text).line(limit)
    assert "\n" not in line
    assert len(line) <= 6 * limit + 1
    tokens = rendered_line(line)
    assert_inert(tokens)
    assert visible(tokens).strip() == expected(text, limit).replace(JOINER, "").strip()


def check_block(text: str, limit: int = 300) -> None:
    block = Untrusted(text=text).block(limit)
    assert len(block) <= 3 * limit + 8
    tokens = MARKDOWN.parse(f"<details><summary>Said</summary>\n\n{block}\n\n</details>\n\nafter\n")
    kinds = [t.type for t in tokens]
    assert kinds == ["html_block", "fence", "html_block", "paragraph_open", "inline", "paragraph_close"], (
        block
    )
    assert tokens[0].content == "<details><summary>Said</summary>\n"
    assert tokens[2].content == "</details>\n"
    assert tokens[1].info == ""
    shown = cut(cleaned(text), limit)
    assert tokens[1].content == shown + "\n"


def check_logged(text: str) -> None:
    logged = Untrusted(text=text).logged()
    # the runner reads a line at \n, \r or \r\n; Python's splitlines also splits at more
    for line in re.split(r"\r\n|\r|\n", logged):
        assert not line.lstrip().startswith("::"), line
        assert not line.lstrip().startswith("##["), line
        assert not re.match(r"[\s\u180e\u200b-\u200d\u2060\ufeff]*(::|##\[)", line), line
    assert logged.replace(JOINER, "") == "\n".join(cleaned(text).splitlines() or [""]).replace(JOINER, "")


@pytest.mark.parametrize("text", HOSTILE)
def test_a_cell_is_inert_and_keeps_its_column(text: str) -> None:
    check_cell(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_line_is_inert_and_stays_one_list_item(text: str) -> None:
    check_line(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_block_stays_one_code_block_inside_details(text: str) -> None:
    check_block(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_logged_text_issues_no_workflow_command(text: str) -> None:
    check_logged(text)


def test_html_is_escaped() -> None:
    assert Untrusted(text="<script>alert(1)</script>").cell(100) == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert Untrusted(text='<img src=x onerror="alert(1)">').line(100) == (
        "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    )


def test_mentions_and_references_get_a_joiner() -> None:
    assert Untrusted(text="@org/team and @user").cell(100) == f"@{JOINER}org/team and @{JOINER}user"
    assert Untrusted(text="fixes #12").line(100) == f"fixes #{JOINER}12"


def test_urls_are_shown_in_code() -> None:
    assert Untrusted(text="go to http://evil.example now").cell(100) == "go to `http://evil.example` now"
    assert Untrusted(text="![](http://x)").line(100) == "`![](http://x)`"
    assert Untrusted(text="`http://a`").line(100) == "`` `http://a` ``"


def test_a_url_keeps_its_pipe_in_a_line_and_escapes_it_in_a_cell() -> None:
    assert Untrusted(text="http://x/a|b").line(100) == "`http://x/a|b`"
    assert Untrusted(text="http://x/a|b").cell(100) == "`http://x/a\\|b`"


def test_links_are_not_links() -> None:
    assert Untrusted(text="[a](javascript:alert(1))").cell(100) == "\\[a\\](javascript:alert(1))"


def test_line_starts_open_nothing() -> None:
    assert Untrusted(text="# title").line(100) == "\\# title"
    assert Untrusted(text="- item").line(100) == "\\- item"
    assert Untrusted(text="10. item").line(100) == "10\\. item"
    assert Untrusted(text="   > quote").line(100) == "&gt; quote"


def test_a_block_outgrows_the_backticks_inside() -> None:
    block = Untrusted(text="a\n`````\n</details>").block(100)
    assert block == "``````\na\n`````\n</details>\n``````"


def test_a_hundred_thousand_characters_are_cut() -> None:
    text = "<b>@user</b> http://x | " * 4200
    assert len(text) >= 100_000
    cell = Untrusted(text=text).cell(200)
    assert len(cell) <= 6 * 200 + 1
    tokens = rendered_cell(cell)
    assert visible(tokens).endswith("…")
    assert len(visible(tokens).replace(JOINER, "")) == 200
    block = Untrusted(text="x" * 100_000).block(1000)
    assert block == "```\n" + "x" * 999 + "…\n```"
    assert Untrusted(text="x" * 100_000).line(50) == "x" * 49 + "…"


def test_short_text_is_not_cut() -> None:
    assert Untrusted(text="hello").cell(5) == "hello"
    assert Untrusted(text="hello!").cell(5) == "hell…"
    assert Untrusted(text="hello").line(1) == "…"


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        Untrusted(text="x").cell(0)


def test_logged_lines_cannot_start_a_command() -> None:
    logged = Untrusted(text="ok\n::add-mask::x\n  ::stop-commands::token\r##[group]g").logged()
    assert logged == f"ok\n:{JOINER}:add-mask::x\n  :{JOINER}:stop-commands::token\n#{JOINER}#[group]g"


PIECES = st.sampled_from(
    list("<>&\"'`*_[]()!|@#:/\\ \n\r\t~-+=.$;{}^%aZ09\x00\x1b\u202e\u200b\u2028\x85")
    + [
        "http://",
        "https://",
        "www.",
        "WWW.",
        "mailto:",
        "javascript:",
        "</details>",
        "<details>",
        "```",
        "~~~",
        "<script>",
        "@org/team",
        "@user",
        "#1",
        "&amp;",
        "&#64;",
        "&#x60;",
        "::",
        "##[",
        "- ",
        "1. ",
        "# ",
        "> ",
        "![",
        "](",
        "[^1]",
        "<http://x>",
        "a@b.example",
        "\\|",
        "\\`",
        "    ",
    ]
)

TEXTS = st.one_of(st.lists(PIECES, max_size=60).map("".join), st.text(max_size=200))


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(1, 400))
def test_generated_cells_are_inert(text: str, limit: int) -> None:
    check_cell(text, limit)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(1, 400))
def test_generated_lines_are_inert(text: str, limit: int) -> None:
    check_line(text, limit)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 400))
def test_generated_blocks_stay_code(text: str, limit: int) -> None:
    check_block(text, limit)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_generated_logs_issue_no_command(text: str) -> None:
    check_logged(text)


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_text_for_a_page_has_no_bidirectional_control_and_keeps_its_lines() -> None:
    text = "evil \u202egnp.exe\u202c,\tand \u2067isolated\u2069\r\nline two \x1b[31m"
    assert (
        Untrusted(text=text).page()
        == "evil \ufffdgnp.exe\ufffd,\tand \ufffdisolated\ufffd\nline two \ufffd[31m"
    )


def test_text_for_a_page_keeps_right_to_left_scripts_and_markup_characters() -> None:
    text = "שלום עולם — مرحبا <b>&amp;</b> `code` *x* @user #12"
    assert Untrusted(text=text).page() == text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_generated_page_text_has_no_bidirectional_control(text: str) -> None:
    shown = Untrusted(text=text).page()
    assert not set(shown) & set(BIDI)
    assert len(shown) <= len(text)
