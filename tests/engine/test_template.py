"""Path and Body: properties over generated JSON, and the cases users write."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from convy.play.agent import Message
from convy.play.placeholders import Placeholders
from convy.play.template import Body, Path, PathMissing

PLACEHOLDERS = {"$messages", "$message", "$conversation"}
MESSAGES = (
    Message(role="system", content="Be kind."),
    Message(role="user", content="Hi"),
    Message(role="assistant", content="Hello!"),
    Message(role="user", content="Where is my order?"),
)
AS_JSON = [{"role": m.role, "content": m.content} for m in MESSAGES]

texts = st.text(max_size=12).filter(lambda text: "$" not in text)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)
keys = st.text(min_size=1, max_size=8).filter(lambda key: "." not in key and key.strip() != "")


def fill(template: object) -> object:
    placeholders = Placeholders(messages=MESSAGES, message="Where is my order?", conversation="attempt-7")
    return Body(template).filled(placeholders)


@given(json_values)
def test_a_template_without_placeholders_is_sent_as_it_is(template: object) -> None:
    assert fill(template) == template


@given(
    st.recursive(
        scalars | st.sampled_from(sorted(PLACEHOLDERS)),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=20,
    )
)
def test_every_placeholder_is_replaced_wherever_it_is(template: object) -> None:
    filled = fill(template)
    text = json.dumps(filled)
    for placeholder in PLACEHOLDERS:
        assert json.dumps(placeholder) not in text
    assert count(template, "$messages") == count(filled, AS_JSON)
    assert count(template, "$conversation") == count(filled, "attempt-7") - count(template, "attempt-7")


def count(data: object, wanted: object) -> int:
    """How many values in `data` (at any depth) equal `wanted`, counting a match as one."""
    if data == wanted and type(data) is type(wanted):
        return 1
    match data:
        case dict():
            return sum(count(item, wanted) for item in data.values())
        case list():
            return sum(count(item, wanted) for item in data)
        case _:
            return 0


def test_the_placeholders_of_a_typical_body() -> None:
    template = {
        "messages": "$messages",
        "input": {"text": "$message", "tags": ["$conversation", "fixed", 3]},
        "session": "$conversation",
        "note": "$message is the latest",
        "options": {"temperature": 0.2, "stream": False, "stop": None},
    }
    assert fill(template) == {
        "messages": AS_JSON,
        "input": {"text": "Where is my order?", "tags": ["attempt-7", "fixed", 3]},
        "session": "attempt-7",
        "note": "Where is my order? is the latest",
        "options": {"temperature": 0.2, "stream": False, "stop": None},
    }


def test_keys_are_not_placeholders() -> None:
    assert fill({"$message": "$message"}) == {"$message": "Where is my order?"}


def test_filling_leaves_the_template_as_it_was() -> None:
    template = {"messages": "$messages", "deep": [{"m": "$message"}]}
    fill(template)
    assert template == {"messages": "$messages", "deep": [{"m": "$message"}]}


@st.composite
def planted(draw: st.DrawFn) -> tuple[object, str, object]:
    """JSON with `value` at a generated path, among other generated values."""
    value = draw(json_values)
    data: object = value
    segments: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        if draw(st.booleans()):
            key = draw(keys)
            siblings = draw(st.dictionaries(keys, json_values, max_size=3))
            siblings[key] = data
            data = siblings
            segments.append(key)
        else:
            before = draw(st.lists(json_values, max_size=3))
            after = draw(st.lists(json_values, max_size=3))
            data = [*before, data, *after]
            negative = draw(st.booleans())
            segments.append(str(len(before) - len(data)) if negative else str(len(before)))
    return data, ".".join(reversed(segments)), value


@given(planted())
def test_a_path_finds_what_was_put_there(case: tuple[object, str, object]) -> None:
    data, path, value = case
    assert Path(path).found(data) == value


@given(planted(), keys)
def test_a_missing_path_raises_naming_it(case: tuple[object, str, object], extra: str) -> None:
    data, path, _ = case
    match data:
        case dict():
            missing = next(f"{extra}{n}" for n in range(100) if f"{extra}{n}" not in data)
            wanted = f"{missing}.{path}"
        case _:
            missing = str(len(json.dumps(data)) + 1)
            wanted = f"{missing}.{path}"
    with pytest.raises(PathMissing) as caught:
        Path(wanted).found(data)
    assert caught.value.path == wanted
    assert caught.value.segment == missing
    assert repr(wanted) in str(caught.value)


def test_the_openai_answer_path() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Hi"}}], "usage": {"prompt_tokens": 9}}
    assert Path("choices.0.message.content").found(answer) == "Hi"
    assert Path("choices.-1.message.role").found(answer) == "assistant"
    assert Path("usage.prompt_tokens").found(answer) == 9


@pytest.mark.parametrize(
    ("path", "data", "segment"),
    [
        ("choices.0.message.content", {"choices": []}, "0"),
        ("choices.1", {"choices": ["a"]}, "1"),
        ("choices.-2", {"choices": ["a"]}, "-2"),
        ("reply.text", {"reply": "plain"}, "text"),
        ("reply.text", {"replies": {}}, "reply"),
        ("items.first", {"items": [1, 2]}, "first"),
        ("a.0", {"a": {"1": True}}, "0"),
        ("0", "text", "0"),
        ("x", None, "x"),
    ],
)
def test_what_is_missing_is_named(path: str, data: object, segment: str) -> None:
    with pytest.raises(PathMissing) as caught:
        Path(path).found(data)
    assert (caught.value.path, caught.value.segment) == (path, segment)


def test_a_number_key_of_an_object_is_a_key() -> None:
    assert Path("a.0").found({"a": {"0": "zero"}}) == "zero"


@pytest.mark.parametrize("text", ["", " ", "a..b", ".a", "a.", "a. .b"])
def test_a_path_with_an_empty_part_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        Path(text)


def test_a_path_read_from_a_file_is_checked_there() -> None:
    with pytest.raises(msgspec.ValidationError, match="empty part"):
        msgspec.convert({"text": "a..b"}, Path)


# Placeholders inside strings, the $messages shape, an unknown session left out

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)


@given(names, texts)
def test_a_doubled_dollar_is_a_literal_dollar_whatever_follows(name: str, tail: str) -> None:
    assert fill({"x": f"$${name}{tail}"}) == {"x": f"${name}{tail}"}


@given(
    names.filter(
        lambda name: name not in {"messages", "message", "message_id", "conversation", "session", "turn"}
    )
)
def test_a_dollar_word_that_is_no_placeholder_stays_as_it_is(name: str) -> None:
    assert fill({"x": f"a ${name} b", "y": f"${name}"}) == {"x": f"a ${name} b", "y": f"${name}"}


def test_placeholders_inside_strings_take_the_longest_name() -> None:
    filled = Body({"a": "u-$message_id", "b": "$message!", "c": "t$turn", "d": "$turn"}).filled(
        Placeholders(messages=MESSAGES, message="Hi", conversation="c", turn=3, ids=("1", "2", "3", "4"))
    )
    assert filled == {"a": "u-4", "b": "Hi!", "c": "t3", "d": 3}


def test_each_message_in_the_shape_given() -> None:
    shape = {
        "$messages": {"id": "$message_id", "role": "$role", "parts": [{"type": "text", "text": "$content"}]}
    }
    filled = Body({"messages": shape, "last": "$message_id"}).filled(
        Placeholders(messages=MESSAGES, message="Where is my order?", ids=("a", "b", "c", "d"))
    )
    assert filled == {
        "messages": [
            {"id": id, "role": m.role, "parts": [{"type": "text", "text": m.content}]}
            for id, m in zip("abcd", MESSAGES, strict=True)
        ],
        "last": "d",
    }


def test_a_value_that_needs_an_unknown_session_is_left_out() -> None:
    template = {"session_id": "$session", "thread": "t-$session", "keep": "$message", "list": ["$session", 1]}
    unknown = Placeholders(messages=MESSAGES, message="Hi")
    known = msgspec.structs.replace(unknown, session="s-1")
    assert Body(template).filled(unknown) == {"keep": "Hi", "list": [1]}
    assert Body(template).filled(known) == {
        "session_id": "s-1",
        "thread": "t-s-1",
        "keep": "Hi",
        "list": ["s-1", 1],
    }


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ('{"message": "$message"}', "is a string"),
        ({"m": {"$messages": {"r": "$role"}, "x": 1}}, "as a key beside others"),
        ({"m": {"$messages": {"inner": {"$messages": {}}}}}, "inside another"),
        ({"m": {"$messages": {"all": "$messages"}}}, "inside a `$messages` shape"),
    ],
)
def test_a_body_that_cannot_be_filled_says_why(template: object, problem: str) -> None:
    assert problem in Body(template).problem()


def test_a_body_that_can_be_filled_has_no_problem() -> None:
    assert Body("$messages").problem() == ""
    assert Body({"m": {"$messages": {"r": "$role"}}, "s": "$message costs $$5"}).problem() == ""
