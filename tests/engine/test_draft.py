"""`convy draft` on hand-made recordings: chat logs, GenAI and OpenInference spans, log records
joined to their spans, run folders; what is written, masked, filtered, left and warned about."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from convy.draft.drafting import Drafts, Recording
from convy.draft.masking import Masking
from convy.fakes import FakeModel
from convy.project.scenarios import Scenarios
from tests.support.recordings import (
    convy,
    genai,
    logs_line,
    openinference,
    record,
    span,
    spans_line,
)

SYSTEM = ("system", "You are the shop's agent.")


def drafted(project: Path, folder: str = "scenarios/drafted") -> dict[str, dict[str, object]]:
    """The drafted files by name, each read as YAML."""
    return {file.stem: yaml.safe_load(file.read_text()) for file in sorted((project / folder).glob("*.yaml"))}


def chat(*lines: object) -> str:
    return "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"


def test_a_chat_log_drafts_one_masked_replay_per_conversation_that_the_project_reads(tmp_path: Path) -> None:
    (tmp_path / "chats.jsonl").write_text(
        chat(
            {
                "id": "c-1",
                "messages": [
                    {"role": "system", "content": "Be kind."},
                    {"role": "user", "content": "Hi, I am jane.doe@example.com, card 4111 1111 1111 1111"},
                    {"role": "assistant", "content": "Hello Jane"},
                    {
                        "role": "user",
                        "content": "Call me on +44 20 7946 0958, IBAN GB82 WEST 1234 5698 7654 32",
                    },
                    {"role": "assistant", "content": "Done"},
                    {"role": "user", "content": "my key is sk-abcdefghijklmnopqrstuvwxyz123456"},
                ],
            },
            {"messages": [{"role": "user", "content": "Where is order 1234567890123?"}]},
        )
    )
    done = convy("draft", "chats.jsonl", "--claim", "The agent is polite.", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = drafted(tmp_path)
    first = files["hi-i-am-email-card-card"]
    assert first["turns"] == [
        "Hi, I am <email>, card <card>",
        "Call me on <phone>, IBAN <iban>",
        "my key is <secret>",
    ]
    assert first["tags"] == ["drafted"]
    assert first["claims"] == ["The agent is polite."]
    assert first["source"] == {"file": "chats.jsonl", "session": "c-1", "index": 0}
    assert "user" not in first
    assert files["where-is-order-1234567890123"]["turns"] == ["Where is order 1234567890123?"]
    assert "wrote scenarios/drafted/hi-i-am-email-card-card.yaml" in done.stdout
    assert "masked 1 e-mail address, 1 phone number, 1 card number, 1 IBAN, 1 key" in done.stdout, done.stdout
    every = Scenarios(tmp_path).all()
    assert {d.scenario.name for d in every} == set(files)
    assert all(not d.scenario.simulated and d.scenario.source.file == "chats.jsonl" for d in every)


def test_keep_pii_leaves_personal_data_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "chats.jsonl").write_text(chat({"messages": [{"role": "user", "content": "I am a@b.co"}]}))
    done = convy("draft", "chats.jsonl", "--claim", "c", "--keep-pii", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [f["turns"] for f in drafted(tmp_path).values()] == [["I am a@b.co"]]
    assert "masked nothing" in done.stdout


def test_a_file_there_already_is_left_and_named(tmp_path: Path) -> None:
    (tmp_path / "chats.jsonl").write_text(chat({"messages": [{"role": "user", "content": "Hello there"}]}))
    mine = tmp_path / "scenarios" / "drafted" / "hello-there.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text("name: hello-there\nuser: mine\nclaims: [kept]\n")
    done = convy("draft", "chats.jsonl", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert mine.read_text() == "name: hello-there\nuser: mine\nclaims: [kept]\n"
    assert "left scenarios/drafted/hello-there.yaml" in done.stdout
    assert "wrote" not in done.stdout


def test_a_name_another_scenario_has_is_made_unique(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "greeting.yaml").write_text("name: hello-there\nuser: u\nclaims: [c]\n")
    (tmp_path / "chats.jsonl").write_text(
        chat(*({"messages": [{"role": "user", "content": "Hello there"}]} for _ in range(2)))
    )
    done = convy("draft", "chats.jsonl", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(drafted(tmp_path)) == ["hello-there-2", "hello-there-3"]
    assert len(Scenarios(tmp_path).all()) == 3


def test_neither_claim_nor_brief_exits_2_saying_to_give_one(tmp_path: Path) -> None:
    (tmp_path / "chats.jsonl").write_text(chat({"messages": [{"role": "user", "content": "Hi"}]}))
    done = convy("draft", "chats.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "--claim" in done.stderr and "--brief" in done.stderr
    assert not (tmp_path / "scenarios").exists()


def test_where_keeps_matching_metadata_and_a_bad_line_is_warned_about_at_file_and_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "chats.jsonl").write_text(
        chat(
            {"messages": [{"role": "user", "content": "Bad bot"}], "metadata": {"feedback": "negative"}},
            "{not json",
            {"messages": [{"role": "user", "content": "Good bot"}], "metadata": {"feedback": "positive"}},
            {"messages": "nope"},
            {"messages": [{"role": "user", "content": "Worse bot"}], "metadata": {"feedback": "negative"}},
        )
    )
    done = convy("draft", "chats.jsonl", "--claim", "c", "--where", "feedback=negative", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(drafted(tmp_path)) == ["bad-bot", "worse-bot"]
    assert "chats.jsonl:2: skipped" in done.stderr
    assert "chats.jsonl:4: skipped" in done.stderr
    limited = convy("draft", "chats.jsonl", "--claim", "c", "--limit", "1", "--to", "latest", cwd=tmp_path)
    assert limited.returncode == 0, limited.stderr
    assert sorted(drafted(tmp_path, "latest")) == ["worse-bot"]


def test_genai_spans_interleaved_across_conversations_carrying_history_draft_each_once(
    tmp_path: Path,
) -> None:
    """Two conversations, no ids, each turn a trace of its own, their calls interleaved in time,
    every call carrying the whole history: each is drafted once, its user's words in order."""
    a1 = [SYSTEM, ("user", "I want a refund")]
    a1_out = [("assistant", "Which order?")]
    b1 = [SYSTEM, ("user", "Do you ship to Norway?")]
    b1_out = [("assistant", "Yes.")]
    a2 = [*a1, *a1_out, ("user", "Order 77")]
    a2_out = [("assistant", "Refunded.")]
    b2 = [*b1, *b1_out, ("user", "How long does it take?")]
    b2_out = [("assistant", "A week.")]
    calls = [(a1, a1_out), (b1, b1_out), (a2, a2_out), (b2, b2_out)]
    lines = [
        spans_line(
            span(
                f"{n:032x}",
                f"{n:016x}",
                1_000 + n,
                {"gen_ai.input.messages": genai(asked), "gen_ai.output.messages": genai(answered)},
            )
        )
        for n, (asked, answered) in enumerate(calls, start=1)
    ]
    (tmp_path / "traces.jsonl").write_text(
        "\n".join([*reversed(lines), '{"resourceSpans": [{"scopeSp']) + "\n"
    )
    done = convy("draft", "traces.jsonl", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "traces.jsonl:5: skipped" in done.stderr
    files = drafted(tmp_path)
    assert sorted(f["turns"] for f in files.values()) == [  # type: ignore[type-var]
        ["Do you ship to Norway?", "How long does it take?"],
        ["I want a refund", "Order 77"],
    ]
    assert files["i-want-a-refund"]["source"] == {"file": "traces.jsonl", "trace": f"{1:032x}", "index": 0}


def test_openinference_lines_with_the_conversation_id_on_a_parent_written_after_its_children(
    tmp_path: Path,
) -> None:
    trace = "ab" * 16
    first = openinference([SYSTEM, ("user", "Hello")], "llm.input_messages")
    first |= openinference([("assistant", "Hi!")], "llm.output_messages")
    second = openinference([("user", "Bye")], "llm.input_messages")
    both = openinference([("user", "Hello")], "llm.input_messages") | {
        "gen_ai.input.messages": genai([("user", "Hello")]),
    }
    (tmp_path / "traces.jsonl").write_text(
        "\n".join(
            [
                spans_line(span(trace, "c1", 10, first, parent="p1")),
                spans_line(span(trace, "c2", 20, second, parent="p1")),
                spans_line(span(trace, "p1", 5, {"session.id": "s-9", "feedback": "negative"})),
                spans_line(span("cd" * 16, "c3", 30, both)),
            ]
        )
        + "\n"
    )
    done = convy("draft", "traces.jsonl", "--claim", "c", "--where", "feedback=negative", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = drafted(tmp_path)
    assert [f["turns"] for f in files.values()] == [["Hello", "Bye"]]
    assert files["hello"]["source"] == {"file": "traces.jsonl", "trace": trace, "session": "s-9", "index": 0}
    everything = convy("draft", "traces.jsonl", "--claim", "c", "--to", "all", cwd=tmp_path)
    assert sorted(f["turns"] for f in drafted(tmp_path, "all").values()) == [["Hello"], ["Hello", "Bye"]]  # type: ignore[type-var]
    assert everything.returncode == 0


def test_log_records_are_joined_to_their_spans_the_structured_details_and_the_older_events(
    tmp_path: Path,
) -> None:
    trace = "ef" * 16
    spans = [
        spans_line(span(trace, "call-1", 100, {}, parent="agent-1")),
        spans_line(span(trace, "agent-1", 90, {"gen_ai.conversation.id": "conv-1"})),
        spans_line(span("12" * 16, "call-2", 200, {}, parent="agent-2")),
        spans_line(span("12" * 16, "agent-2", 190, {"gen_ai.conversation.id": "conv-1"})),
    ]
    details = {
        "gen_ai.input.messages": [
            {"role": "system", "parts": [{"type": "text", "content": "sys"}]},
            {"role": "user", "parts": [{"type": "text", "content": "First question"}]},
        ],
        "gen_ai.output.messages": [
            {"role": "assistant", "parts": [{"type": "text", "content": "First answer"}]}
        ],
    }
    logs = [
        logs_line(record(trace, "call-1", "gen_ai.client.inference.operation.details", details, 5)),
        logs_line(
            record("12" * 16, "call-2", "gen_ai.system.message", {"content": "sys"}, 1),
            record("12" * 16, "call-2", "gen_ai.user.message", {"content": "First question"}, 1),
            record("12" * 16, "call-2", "gen_ai.assistant.message", {"content": "First answer"}, 1),
            record("12" * 16, "call-2", "gen_ai.user.message", {"content": "Second one"}, 1),
            record(
                "12" * 16,
                "call-2",
                "gen_ai.choice",
                {"index": 0, "message": {"role": "assistant", "content": "Second answer"}},
                1,
            ),
        ),
    ]
    (tmp_path / "spans.jsonl").write_text("\n".join(spans) + "\n")
    (tmp_path / "logs.jsonl").write_text("\n".join(logs) + "\n")
    done = convy("draft", "logs.jsonl", "spans.jsonl", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [f["turns"] for f in drafted(tmp_path).values()] == [["First question", "Second one"]]


def test_a_run_folder_drafts_its_attempts_and_where_picks_those_that_failed(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode in (0, 1)
    (run,) = [p for p in (tmp_path / "results").glob("*/*") if p.is_dir()]
    attempts = [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]
    failing = [a for a in attempts if a["decision"].get("holds") is False]
    assert failing
    shown = run.relative_to(tmp_path).as_posix()
    done = convy("draft", shown, "--claim", "c", "--where", "holds=false", "--keep-pii", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = drafted(tmp_path)
    assert sorted(tuple(f["turns"]) for f in files.values()) == sorted(  # type: ignore[arg-type]
        tuple(turn["user"] for turn in a["turns"]) for a in failing
    )
    assert all(f["source"]["run"] == shown for f in files.values())  # type: ignore[index]


def test_masking_checks_cards_and_ibans_and_leaves_ordinary_numbers() -> None:
    masking = Masking()
    assert (
        masking.text("card 4111 1111 1111 1112 and 4242-4242-4242-4242")
        == "card 4111 1111 1111 1112 and <card>"
    )
    assert masking.text("IBAN DE89 3704 0044 0532 0130 00, not DE00 ABCD EFGH IJKL") == (
        "IBAN <iban>, not DE00 ABCD EFGH IJKL"
    )
    assert masking.text("order 42 on 2024-05-01, ref 12345") == "order 42 on 2024-05-01, ref 12345"
    assert masking.text("token 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6") == "token <secret>"
    assert masking.text("(555) 123-4567") == "<phone>"
    assert masking.counts == {"email": 0, "phone": 1, "card": 1, "iban": 1, "secret": 1}


def test_a_pretty_printed_export_of_one_object_is_read_whole(tmp_path: Path) -> None:
    line = spans_line(
        span("9" * 32, "1" * 16, 5, {"gen_ai.input.messages": genai([SYSTEM, ("user", "One object")])})
    )
    (tmp_path / "export.json").write_text(json.dumps(json.loads(line), indent=2))
    done = convy("draft", "export.json", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [f["turns"] for f in drafted(tmp_path).values()] == [["One object"]]
    assert done.stderr == ""


def test_a_brief_the_model_did_not_draft_is_warned_about_and_its_conversation_not_written(
    tmp_path: Path,
) -> None:
    (tmp_path / "chats.jsonl").write_text(
        chat(
            {
                "messages": [
                    {"role": "user", "content": "Mail me at a@b.co"},
                    {"role": "assistant", "content": "Ok"},
                ]
            },
            {"messages": [{"role": "user", "content": "Second"}]},
        )
    )
    model = FakeModel(['{"user": "You want mail at a@b.co.", "claims": ["The agent agrees."]}', "not JSON"])
    drafts = Drafts(
        sources=(Recording(path=tmp_path / "chats.jsonl", shown="chats.jsonl"),),
        to=tmp_path / "scenarios" / "drafted",
        here=tmp_path,
        briefed=True,
    )
    done = asyncio.run(drafts.done(model))
    assert done.written == ("scenarios/drafted/mail-me-at-email.yaml",)
    assert any("the model drafted nothing" in warning for warning in done.warnings)
    assert any("second.yaml: not written" in warning for warning in done.warnings)
    text = (tmp_path / done.written[0]).read_text()
    assert "# drafted from a recorded conversation: review the claims before relying on them\nuser:" in text
    drafted_file = yaml.safe_load(text)
    assert drafted_file["user"] == "You want mail at <email>."
    assert drafted_file["claims"] == ["The agent agrees."]
    assert drafted_file["max_turns"] == 1
    assert "a@b.co" not in str(model.asked[0]), "the model reads the conversation masked"
    assert done.masked == {"email": 2}


def test_a_system_prompt_that_changes_every_call_does_not_repeat_the_history(tmp_path: Path) -> None:
    first = [("system", "It is 10:01."), ("user", "Hello")]
    second = [("system", "It is 10:02."), ("user", "Hello"), ("assistant", "Hi"), ("user", "Bye")]
    (tmp_path / "traces.jsonl").write_text(
        spans_line(
            span(
                "1" * 32,
                "1" * 16,
                1,
                {
                    "gen_ai.input.messages": genai(first),
                    "gen_ai.output.messages": genai([("assistant", "Hi")]),
                },
            ),
            span("2" * 32, "2" * 16, 2, {"gen_ai.input.messages": genai(second)}),
        )
        + "\n"
    )
    done = convy("draft", "traces.jsonl", "--claim", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [f["turns"] for f in drafted(tmp_path).values()] == [["Hello", "Bye"]]
