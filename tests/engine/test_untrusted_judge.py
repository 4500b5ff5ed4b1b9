"""An untrusted judge is never green by default (decision 48), end to end: `convy run` against the
agent and model stand-ins, the scripted judge's decisions on the labels set by the labels
themselves, κ recomputed here. min-judge-kappa defaults to 0.4: 30 labelled decisions with κ 0.00
are inconclusive (exit 3, judge-untrusted, the headline naming κ, the count and the value), κ 0.68
passes; 12 decisions under the default wait, the Judge line saying how many more; 0 turns the rule
off; a value set keeps its full meaning. Labels all one way give a null κ, never 1.00, which counts
as under a value set and not under the default; `convy calibrate` says the same; the bootstrap's
resamples with an undefined κ are counted, recomputed here from the seed, and never scored."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import msgspec

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.labelled import calibrating, convy, judge, kappa, pairs, played, project

PASSES_EVERYTHING = pairs((10, 10), (20, 0))
"""30 labelled decisions, the person holding 10, the judge all 30: κ 0.00."""
MODERATE = pairs((10, 7), (20, 19))
"""30 labelled decisions with κ 0.68."""


def judge_line(comment: str) -> str:
    lines = [line for line in comment.splitlines() if line.strip()]
    return lines[next(i for i, line in enumerate(lines) if line.startswith("## ")) + 1]


def test_the_default_trips_at_kappa_0_on_30_decisions_and_not_at_0_68(tmp_path: Path) -> None:
    low, moderate = project(tmp_path / "low", PASSES_EVERYTHING), project(tmp_path / "moderate", MODERATE)
    with AgentServer() as agent, ModelServer(judge) as models:
        untrusted = played(low, agent, models)
        trusted = played(moderate, agent, models)
    assert kappa(PASSES_EVERYTHING) == 0 and f"{kappa(MODERATE):.2f}" == "0.68"
    assert untrusted.code == 3, untrusted.said
    headline = "the judge's κ 0.00 on 30 labelled decisions is under min-judge-kappa 0.40 (the default)"
    assert f"Decided by judge-untrusted: {headline}." in untrusted.done.stdout
    assert f"**Decided by `judge-untrusted`:** {headline}." in untrusted.comment()
    assert "## ⚠️ convy: inconclusive" in untrusted.comment()
    assert untrusted.record()["kappa"] == 0 and untrusted.record()["decisions"] == 30
    assert judge_line(untrusted.comment()).startswith("Judge: κ 0.00 (0.00–0.00) on 30 labelled decisions")
    assert trusted.code == 0, trusted.said
    assert "Decided by floor-only" in trusted.done.stdout
    assert trusted.record()["kappa"] == kappa(MODERATE)
    assert judge_line(trusted.comment()).startswith(f"Judge: κ {kappa(MODERATE):.2f} (")
    assert "more labelled decision" not in trusted.comment()


def test_12_decisions_under_the_default_do_not_trip_it_and_the_judge_line_says_how_many_more(
    tmp_path: Path,
) -> None:
    few = pairs((4, 4), (8, 0))
    folder = project(tmp_path, few)
    with AgentServer() as agent, ModelServer(judge) as models:
        waiting = played(folder, agent, models)
        set_ = played(folder, agent, models, "--min-judge-kappa", "0.4")
    assert waiting.code == 0, waiting.said
    assert "Decided by floor-only" in waiting.done.stdout
    line = judge_line(waiting.comment())
    assert line.startswith("Judge: κ 0.00 (") and " on 12 labelled decisions · " in line
    assert line.endswith(" · 8 more labelled decisions would measure the judge (convy label)")
    assert line in waiting.done.stdout
    assert set_.code == 3, "a value set, even the default's: too few labels is inconclusive"
    assert "rests on 12 labelled decisions, fewer than min-labels 20 (min-judge-kappa 0.40)" in set_.said
    assert "more labelled decision" not in set_.comment()


def test_0_turns_it_off(tmp_path: Path) -> None:
    folder = project(tmp_path, PASSES_EVERYTHING)
    pyproject = folder / "pyproject.toml"
    with AgentServer() as agent, ModelServer(judge) as models:
        flag = played(folder, agent, models, "--min-judge-kappa", "0")
        pyproject.write_text("[tool.convy]\nmin-judge-kappa = 0\n")
        configured = played(folder, agent, models)
        pyproject.write_text("[tool.convy]\nmin-judge-kappa = 0.4\n")
        written = played(folder, agent, models)
    for off in (flag, configured):
        assert off.code == 0, off.said
        assert "Decided by floor-only" in off.done.stdout
        assert judge_line(off.comment()).startswith("Judge: κ 0.00 (0.00–0.00) on 30 labelled decisions")
    assert written.code == 3 and "judge-untrusted" in written.done.stdout
    assert "under min-judge-kappa 0.40." in written.done.stdout, "a value written in the file is set"


def test_labels_all_one_way_give_a_null_kappa_never_1_and_count_as_under_a_value_set(tmp_path: Path) -> None:
    held = [(True, True)] * 30
    folder = project(tmp_path, held)
    with AgentServer() as agent, ModelServer(judge) as models:
        default = played(folder, agent, models)
        set_ = played(folder, agent, models, "--min-judge-kappa", "0.5")
        calibrated = convy(
            "calibrate", "--model-url", models.url, "--model-key", "k", "--judge-model", "judge-a", cwd=folder
        )
    for run in (default, set_):
        record = run.record()
        assert (record["kappa"], record["kappa_low"], record["kappa_high"]) == (None, None, None)
        assert record["decisions"] == 30 and record["agreement"] == 1
        assert "1.00" not in run.comment() and "1.00" not in run.done.stdout
        line = judge_line(run.comment())
        assert line.startswith("Judge: κ undefined on 30 labelled decisions: ")
        assert "the labels cannot measure the judge" in line and "convy label --failing" in line
    assert default.code == 0, "under the default an undefined κ does not apply"
    assert "Decided by floor-only" in default.done.stdout
    assert set_.code == 3, set_.said
    assert (
        "Decided by judge-untrusted: the judge's κ is undefined on 30 labelled decisions" in set_.done.stdout
    )
    assert "min-judge-kappa 0.50" in set_.done.stdout
    assert calibrated.returncode == 0, calibrated.stderr
    assert "1.00" not in calibrated.stdout
    assert "κ undefined" in calibrated.stdout and "the labels cannot measure the judge" in calibrated.stdout
    assert "convy label --failing" in calibrated.stdout
    (written,) = (folder / "results" / "calibration").glob("*/calibration.json")
    figures = json.loads(written.read_text())
    assert (figures["kappa"], figures["kappa_low"], figures["kappa_high"]) == (None, None, None)
    (claim,) = figures["claims"]
    assert (claim["kappa"], claim["kappa_low"], claim["kappa_high"]) == (None, None, None)


def test_no_line_under_a_judge_untrusted_headline_says_another_rule_decided(tmp_path: Path) -> None:
    folder = project(tmp_path, PASSES_EVERYTHING)
    with AgentServer() as agent, ModelServer(judge) as models:
        default = played(folder, agent, models)
        set_ = played(folder, agent, models, "--min-judge-kappa", "0.6")
    for done in (set_, default):
        assert done.code == 3, done.said
        for text in (done.comment(), done.done.stdout, (done.run / "report.html").read_text()):
            assert "floor" not in text.lower()
            assert not re.search(r"[Dd]ecided (by|on) (?!`?judge-untrusted)", text)
        assert "now; no baseline (no baseline given)." in done.done.stdout


def test_resamples_with_an_undefined_kappa_are_counted_and_said_never_scored(tmp_path: Path) -> None:
    # four labelled attempts: the person holds one; a resample without it is all one way
    decisions = [(True, True), (False, True), (False, False), (False, False)]
    folder = project(tmp_path, decisions)
    with ModelServer(judge) as models:
        done = convy(
            "calibrate", "--model-url", models.url, "--model-key", "k", "--judge-model", "judge-a", cwd=folder
        )
        assert all(calibrating(request) for request in models.requests)
    assert done.returncode == 0, done.stderr
    (written,) = (folder / "results" / "calibration").glob("*/calibration.json")
    figures = json.loads(written.read_text())
    lines = [json.loads(line) for line in written.with_suffix(".jsonl").read_text().splitlines()]
    seed = hashlib.sha256(msgspec.json.encode([(line["transcript"], line["person"]) for line in lines]))
    draw = random.Random(int.from_bytes(seed.digest()[:8], "big"))
    values: list[float] = []
    undefined = 0
    for _ in range(2000):
        drawn = draw.choices(decisions, k=len(decisions))
        if len({person for person, _ in drawn}) == 1:
            undefined += 1
        else:
            values.append(kappa(drawn))
    values.sort()
    assert undefined > 0 and figures["undefined_resamples"] == undefined
    assert figures["kappa"] == kappa(decisions) == 0.5
    assert figures["kappa_low"] == min(values[int(0.025 * (len(values) - 1))], 0.5)
    assert figures["kappa_high"] == max(values[round(0.975 * (len(values) - 1))], 0.5)
    assert "κ 0.50 (" in done.stdout and f"; {undefined:,} of 2,000 resamples undefined)" in done.stdout
