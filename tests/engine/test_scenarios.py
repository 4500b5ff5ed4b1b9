"""Scenario files: reading them with file:line errors, the project's scenarios, and `match`."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from convy.errors import ConfigurationError
from convy.project.document import Declaration, Document
from convy.project.scenario import Graded, Scenario
from convy.project.scenarios import Matching, Scenarios
from convy.project.settings import Settings

TESTS = Path(__file__).resolve().parent.parent
BAD = TESTS / "bad"

REFUND = """\
# a comment first
name: refund-late-order
user: |
  You are Dana. Order 4411 has not arrived.
opening: "Hi, my headphones never arrived."
max_turns: 6
tags: [billing, orders]
claims:
  - The agent asks for the order number.
  - claim: How clearly did the agent explain what happens next?
    grades: {clear: true, vague: false}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def scenario(name: str, *tags: str) -> str:
    return f"name: {name}\nuser: You are Dana.\nclaims: [The agent greets.]\ntags: [{', '.join(tags)}]\n"


@pytest.mark.parametrize(
    ("file", "line", "fragment"),
    [
        ("syntax-error.yaml", 6, "YAML syntax error"),
        ("unknown-key.yaml", 7, "unknown key `expected`"),
        ("empty-claims.yaml", 5, "`claims` is empty"),
        ("no-passing-grade.yaml", 8, "no passing grade"),
        ("missing-user.yaml", 2, "`user` is missing"),
        ("wrong-type.yaml", 6, "max_turns"),
        ("empty-claim.yaml", 7, "`claims[1]` is empty"),
        ("duplicate-key.yaml", 6, "key `claims` appears twice in one mapping (first on line 4)"),
        ("unknown-claim-key.yaml", 8, "unknown key `grade`"),
        ("list-item-unknown-key.yaml", 11, "unknown key `tag`"),
        ("list-without-names.yaml", 6, "needs a `name`"),
        ("bad-grade-value.yaml", 7, "Expected `bool`"),
        ("not-a-scenario.yaml", 2, "a scenario (a mapping of keys) or a list"),
        ("empty.yaml", 1, "empty"),
        ("two-documents.yaml", 5, "single document"),
        ("empty-user.yaml", 3, "`user`"),
        ("tags-not-a-list.yaml", 5, "Expected `array`"),
    ],
)
def test_a_bad_scenario_file_is_a_configuration_error_at_its_file_and_line(
    file: str, line: int, fragment: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Document(BAD / file, TESTS).declarations()
    assert raised.value.where == f"bad/{file}:{line}"
    assert fragment in raised.value.message


def test_every_bad_file_is_tested() -> None:
    tested = {
        "syntax-error.yaml",
        "unknown-key.yaml",
        "empty-claims.yaml",
        "no-passing-grade.yaml",
        "missing-user.yaml",
        "wrong-type.yaml",
        "empty-claim.yaml",
        "duplicate-key.yaml",
        "unknown-claim-key.yaml",
        "list-item-unknown-key.yaml",
        "list-without-names.yaml",
        "bad-grade-value.yaml",
        "not-a-scenario.yaml",
        "empty.yaml",
        "two-documents.yaml",
        "empty-user.yaml",
        "tags-not-a-list.yaml",
    }
    assert {path.name for path in BAD.glob("*.yaml")} == tested


def test_an_unknown_key_names_the_key_and_the_keys_allowed() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Document(BAD / "unknown-key.yaml", BAD).declarations()
    assert raised.value.where == "unknown-key.yaml:7"
    assert "`expected`" in raised.value.message
    assert "user" in raised.value.message and "claims" in raised.value.message


def test_duplicate_names_name_both_files_and_lines() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Scenarios(BAD, "duplicate-names").all()
    assert raised.value.where == "duplicate-names/second.yaml:3"
    assert "duplicate-names/first.yaml:2" in raised.value.message
    assert "duplicate-names/second.yaml:3" in raised.value.message
    assert "`refund`" in raised.value.message


def test_a_name_taken_from_a_stem_clashes_with_a_declared_one(tmp_path: Path) -> None:
    write(tmp_path, "scenarios/a.yaml", scenario("refund"))
    write(tmp_path, "scenarios/refund.yaml", "user: You are Sam.\nclaims: [The agent greets.]\n")
    with pytest.raises(ConfigurationError) as raised:
        Scenarios(tmp_path).all()
    assert raised.value.where == "scenarios/refund.yaml:1"
    assert "scenarios/a.yaml:1" in raised.value.message


def test_a_file_gives_its_scenario_its_claims_and_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "scenarios/refund.yaml", REFUND)
    (declaration,) = Document(path, tmp_path).declarations()
    assert declaration == Declaration(
        scenario=Scenario(
            name="refund-late-order",
            user="You are Dana. Order 4411 has not arrived.\n",
            opening="Hi, my headphones never arrived.",
            max_turns=6,
            tags=("billing", "orders"),
            claims=(
                "The agent asks for the order number.",
                Graded(
                    claim="How clearly did the agent explain what happens next?",
                    grades={"clear": True, "vague": False},
                ),
            ),
        ),
        file="scenarios/refund.yaml",
        line=2,
        claim_lines=(9, 10),
    )
    assert declaration.where == "scenarios/refund.yaml:2"


def test_a_scenario_without_a_name_is_named_after_its_file(tmp_path: Path) -> None:
    one = write(tmp_path, "late-order.yaml", "user: You are Dana.\nclaims: [The agent greets.]\n")
    listed = write(tmp_path, "listed.yaml", "- user: You are Dana.\n  claims: [The agent greets.]\n")
    assert Document(one, tmp_path).declarations()[0].scenario.name == "late-order"
    assert Document(listed, tmp_path).declarations()[0].scenario.name == "listed"


def test_a_list_gives_each_scenario_its_own_lines(tmp_path: Path) -> None:
    text = (
        "- name: first\n"
        "  user: You are Dana.\n"
        "  claims:\n"
        "    - The agent greets.\n"
        "\n"
        "- name: second\n"
        "  user: You are Sam.\n"
        "  claims:\n"
        "    - The agent greets.\n"
        "    - claim: Polite?\n"
        "      grades: {yes please: true}\n"
    )
    path = write(tmp_path, "several.yaml", text)
    declarations = Document(path, tmp_path).declarations()
    assert [(d.scenario.name, d.line, d.claim_lines) for d in declarations] == [
        ("first", 1, (4,)),
        ("second", 6, (9, 10)),
    ]


def test_an_empty_list_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "none.yaml", "# nothing yet\n[]\n")
    with pytest.raises(ConfigurationError) as raised:
        Document(path, tmp_path).declarations()
    assert raised.value.where == "none.yaml:2"


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes("user: Zoë\n".encode("latin-1"))
    with pytest.raises(ConfigurationError) as raised:
        Document(path, tmp_path).declarations()
    assert raised.value.where == "latin.yaml"


def test_scenarios_come_in_declaration_order(tmp_path: Path) -> None:
    write(tmp_path, "scenarios/b.yaml", scenario("b-one"))
    write(
        tmp_path,
        "scenarios/a.yml",
        "- name: a-two\n  user: u\n  claims: [c]\n- name: a-one\n  user: u\n  claims: [c]\n",
    )
    write(tmp_path, "scenarios/c.yaml", scenario("c-one"))
    write(tmp_path, "scenarios/notes.txt", "not a scenario")
    names = [declaration.scenario.name for declaration in Scenarios(tmp_path).all()]
    assert names == ["a-two", "a-one", "b-one", "c-one"]


def test_a_scenarios_folder_is_read_with_its_subfolders(tmp_path: Path) -> None:
    write(tmp_path, "scenarios/refund.yaml", scenario("refund"))
    write(tmp_path, "scenarios/drafted/greeting.yaml", scenario("greeting"))
    write(tmp_path, "scenarios/attacks/deep/leak.yml", scenario("leak"))
    write(tmp_path, "scenarios/drafted/notes.txt", "not a scenario")
    found = Scenarios(tmp_path).all()
    assert [(d.scenario.name, d.file) for d in found] == [
        ("leak", "scenarios/attacks/deep/leak.yml"),
        ("greeting", "scenarios/drafted/greeting.yaml"),
        ("refund", "scenarios/refund.yaml"),
    ]


def test_names_are_unique_across_the_subfolders(tmp_path: Path) -> None:
    write(tmp_path, "scenarios/refund.yaml", scenario("refund"))
    write(tmp_path, "scenarios/drafted/refund-again.yaml", "\n" + scenario("refund"))
    with pytest.raises(ConfigurationError) as raised:
        Scenarios(tmp_path).all()
    assert raised.value.where == "scenarios/refund.yaml:1"
    assert "scenarios/drafted/refund-again.yaml:2" in str(raised.value)


def test_scenarios_may_be_a_glob(tmp_path: Path) -> None:
    write(tmp_path, "checks/billing/refund.yaml", scenario("refund"))
    write(tmp_path, "checks/greeting.yaml", scenario("greeting"))
    write(tmp_path, "checks/other.txt", scenario("other"))
    found = Scenarios(tmp_path, "checks/**/*.yaml").all()
    assert [(d.scenario.name, d.file) for d in found] == [
        ("refund", "checks/billing/refund.yaml"),
        ("greeting", "checks/greeting.yaml"),
    ]


def test_no_scenario_files_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    write(tmp_path, "scenarios/readme.md", "nothing")
    with pytest.raises(ConfigurationError) as raised:
        Scenarios(tmp_path).all()
    assert raised.value.where == "scenarios"
    with pytest.raises(ConfigurationError) as missing:
        Scenarios(tmp_path, "elsewhere/*.yaml").files()
    assert missing.value.where == "scenarios"
    assert "elsewhere/*.yaml" in missing.value.message


def declared(*scenarios: tuple[str, tuple[str, ...]]) -> tuple[Declaration, ...]:
    return tuple(
        Declaration(
            scenario=Scenario(name=name, user="u", claims=("c",), tags=tags),
            file=f"scenarios/{name}.yaml",
            line=1,
            claim_lines=(3,),
        )
        for name, tags in scenarios
    )


ALL = declared(
    ("refund-late", ("billing",)),
    ("refund-early", ("billing", "vip")),
    ("greeting", ()),
    ("cancel", ("orders",)),
)


def names(declarations: tuple[Declaration, ...]) -> list[str]:
    return [declaration.scenario.name for declaration in declarations]


def test_matching_nothing_given_chooses_every_scenario() -> None:
    assert Matching().chosen(ALL) == ALL
    assert Matching(("", " ")).chosen(ALL) == ALL


def test_matching_by_name_glob() -> None:
    assert names(Matching(("refund-*",)).chosen(ALL)) == ["refund-late", "refund-early"]
    assert names(Matching(("greeting",)).chosen(ALL)) == ["greeting"]


def test_matching_by_tag_glob_keeps_declaration_order() -> None:
    assert names(Matching(("orders", "vi?")).chosen(ALL)) == ["refund-early", "cancel"]


def test_matching_is_case_sensitive() -> None:
    with pytest.raises(ConfigurationError):
        Matching(("GREETING",)).chosen(ALL)


def test_a_glob_that_matches_nothing_is_an_error_naming_match() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Matching(("greeting", "refnud-*")).chosen(ALL)
    assert raised.value.where == "match"
    assert "refnud-*" in raised.value.message


def test_the_match_setting_is_split_on_commas() -> None:
    chosen = Settings(match="refund-late, cancel,,").matching().chosen(ALL)
    assert names(chosen) == ["refund-late", "cancel"]


BASE = Scenario(
    name="refund",
    user="You are Dana.",
    claims=("The agent asks for the order number.", Graded(claim="Clear?", grades={"yes": True})),
    tags=("billing",),
)


def test_the_fingerprint_changes_when_a_claim_changes() -> None:
    changed_text = msgspec.structs.replace(BASE, claims=("The agent asks for the order id.", BASE.claims[1]))
    changed_grade = msgspec.structs.replace(
        BASE, claims=(BASE.claims[0], Graded(claim="Clear?", grades={"yes": True, "no": False}))
    )
    added = msgspec.structs.replace(BASE, claims=(*BASE.claims, "The agent is polite."))
    fingerprints = {BASE.fingerprint(), *(s.fingerprint() for s in (changed_text, changed_grade, added))}
    assert len(fingerprints) == 4


def test_the_fingerprint_changes_with_the_brief_the_opening_and_max_turns() -> None:
    changed = (
        msgspec.structs.replace(BASE, user="You are Sam."),
        msgspec.structs.replace(BASE, opening="Hi"),
        msgspec.structs.replace(BASE, max_turns=3),
    )
    assert all(scenario.fingerprint() != BASE.fingerprint() for scenario in changed)


def test_the_fingerprint_ignores_tags_and_name() -> None:
    assert msgspec.structs.replace(BASE, tags=("other", "tags")).fingerprint() == BASE.fingerprint()
    assert msgspec.structs.replace(BASE, name="renamed").fingerprint() == BASE.fingerprint()


def test_a_merge_key_shares_keys_between_scenarios_without_a_false_repeat(tmp_path: Path) -> None:
    text = (
        "- &base\n"
        "  name: one\n"
        "  user: You are Dana.\n"
        "  claims: [The agent greets.]\n"
        "- <<: *base\n"
        "  name: two\n"
    )
    declarations = Document(write(tmp_path, "shared.yaml", text), tmp_path).declarations()
    assert [(d.scenario.name, d.scenario.user, d.line, d.claim_lines) for d in declarations] == [
        ("one", "You are Dana.", 1, (4,)),
        ("two", "You are Dana.", 5, (4,)),
    ]


def test_source_says_where_a_scenario_was_drafted_from(tmp_path: Path) -> None:
    write(
        tmp_path,
        "scenarios/drafted.yaml",
        "name: drafted\nsource: {file: traces.jsonl, trace: abc, session: s-1, index: 2}\n"
        "turns: [hi]\nclaims: [c]\n",
    )
    write(
        tmp_path,
        "scenarios/kept.yaml",
        "name: kept\nsource: {run: results/a/1, index: 3}\nturns: [hi]\nclaims: [c]\n",
    )
    found = {d.scenario.name: d.scenario for d in Scenarios(tmp_path).all()}
    assert found["drafted"].source.text() == "traces.jsonl, trace abc, session s-1, #2"
    assert found["kept"].source.text() == "results/a/1, #3"
    plain = Scenario(user="u", claims=("c",))
    assert plain.source.text() == ""
    assert (
        found["drafted"].fingerprint()
        == msgspec.structs.replace(found["drafted"], source=plain.source).fingerprint()
    )


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("{file: a.jsonl, bogus: 1}", "bogus"),
        ("{file: a.jsonl, run: results/a/1}", "more than one"),
        ("{file: a.jsonl, index: -1}", "source.index"),
        ("{file: a.jsonl, index: first}", "index"),
    ],
)
def test_a_bad_source_is_an_error_at_its_file_and_line(tmp_path: Path, source: str, said: str) -> None:
    write(tmp_path, "scenarios/bad.yaml", f"name: bad\nturns: [hi]\nsource: {source}\nclaims: [c]\n")
    with pytest.raises(ConfigurationError) as raised:
        Scenarios(tmp_path).all()
    assert raised.value.where.startswith("scenarios/bad.yaml:")
    assert said in raised.value.message
