"""Cost in money, a budget and an estimate (docs/cost.md), end to end against real local servers:
each attempt's cost worked out exactly from its tokens and the given prices, an unknown price never
$0, the `prices` setting from each source, the budget stop, and an estimate that asks nothing."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from convy.compare.money import Costs, Dollars, Money
from convy.play.outcome import Cost, Outcome, Verdict
from tests.support.command import convy, lines, only_run
from tests.support.trusted import HELLO, decided

PRICES = {"user-m": {"input": 2.0, "output": 8.0}, "judge-m": {"input": 1.5, "output": 3.0}}
AGENT = {"agent-m": {"input": 0.5, "output": 4.0}}


def project(folder: Path, scenarios: int = 1) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    for index in range(scenarios):
        (folder / "scenarios" / f"hello-{index}.yaml").write_text(HELLO)
    return folder


def played(agent_url: str, models_url: str, cwd: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return convy(
        "run",
        "--agent-url",
        agent_url,
        "--model-url",
        models_url,
        "--model-key",
        "sk-test-key-123",
        "--user-model",
        "user-m",
        "--judge-model",
        "judge-m",
        *more,
        cwd=cwd,
    )


def usd(usage: dict[str, int], price: dict[str, float]) -> float:
    return (usage["input"] * price["input"] + usage["output"] * price["output"]) / 1_000_000


def test_each_attempt_costs_its_tokens_at_the_given_prices(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    prices = json.dumps({**PRICES, **AGENT})
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "2",
            "--prices",
            prices,
            "--agent-model",
            "agent-m",
        )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    total = 0.0
    judged = 0
    for line in lines(folder):
        cost = line["cost"]
        assert isinstance(cost, dict)
        user, judge = line["user_usage"], line["judge_usage"]
        assert isinstance(user, dict) and isinstance(judge, dict) and user["input"] > 0
        judged += judge["input"] > 0
        assert (judge["input"] == 0) == bool(line["reused"]), "only a reused verdict asks no judge"
        assert cost["user"] == pytest.approx(usd(user, PRICES["user-m"]), rel=1e-9)
        assert cost["judge"] == pytest.approx(usd(judge, PRICES["judge-m"]), rel=1e-9)
        turns = line["turns"]
        assert isinstance(turns, list)
        spent = {
            "input": sum(t["usage"]["input"] for t in turns),
            "output": sum(t["usage"]["output"] for t in turns),
        }
        assert cost["agent"] == pytest.approx(usd(spent, AGENT["agent-m"]), rel=1e-9)
        total += cost["user"] + cost["judge"] + cost["agent"]
    assert judged >= 1
    shown = Money(usd=total, known=2, unknown=0).text()
    comment = (folder / "comment.md").read_text()
    assert "| cost " in comment and shown in comment and "≥" not in comment
    assert shown in done.stdout
    report = (folder / "report.html").read_text()
    assert ">Cost</th>" in report and f">{shown}<" in report, "one scenario: its cost is the run's"


def test_a_model_of_unknown_price_costs_unknown_never_0(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    only_user = json.dumps({"user-m": PRICES["user-m"]})
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(f"{agent.url}/ok", models.url, tmp_path, "--repeat", "2", "--prices", only_user)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    for line in lines(folder):
        cost = line["cost"]
        assert isinstance(cost, dict)
        if line["reused"]:
            assert cost["judge"] == 0, "a verdict reused asked no judge: it cost nothing, whatever the price"
        else:
            assert cost["judge"] is None, "judge-m has no known price: unknown, not 0"
        assert cost["agent"] is None, "the agent's model is not named: unknown"
        assert isinstance(cost["user"], float) and cost["user"] > 0
    comment = (folder / "comment.md").read_text()
    row = next(line for line in comment.splitlines() if line.startswith("| cost"))
    assert "≥ $" in row and "$0.00 " not in row


def test_a_model_that_reports_no_tokens_costs_unknown_never_0(tmp_path: Path) -> None:
    """A known price, but the service said nothing of the tokens: the call was made, its cost is
    unknown — never the $0 of a party that was not asked."""
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    with AgentServer() as agent, ModelServer(decided, usage=False) as models:
        prices = json.dumps(PRICES)
        done = played(f"{agent.url}/ok", models.url, tmp_path, "--repeat", "1", "--prices", prices)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    for line in lines(folder):
        cost = line["cost"]
        assert isinstance(cost, dict)
        assert cost["user"] is None and cost["judge"] is None, "asked, tokens unknown: cost unknown"
    row = next(line for line in (folder / "comment.md").read_text().splitlines() if line.startswith("| cost"))
    assert "$0.00" not in row and ("unknown" in row or "≥ $" in row)


def test_nothing_priced_is_unknown_not_0() -> None:
    costs = Costs()
    held = Verdict(holds=True, claims=())
    line = Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=held)
    costs.add(line)  # a folder older than prices
    costs.add(msgspec.structs.replace(line, cost=Cost()))
    assert costs.money().text() == "unknown"
    assert Money(usd=0.0, known=1, unknown=0).text() == "$0.00"
    assert Money(usd=0.5, known=1, unknown=1).text() == "≥ $0.50"
    assert Dollars(0.0012345).text() == "$0.0012"


def test_the_price_library_and_its_version_are_in_run_json(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = convy("run", "--demo", "--repeat", "1", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    run = json.loads((only_run(tmp_path / "results") / "run.json").read_text())
    assert run["spec"]["price_library"] == f"genai-prices {version('genai-prices')}"
    assert "cost" in done.stdout and "unknown" not in next(
        line for line in done.stdout.splitlines() if line.startswith("cost")
    )


def test_a_known_model_is_priced_by_the_library_by_its_provider() -> None:
    from convy.play.price import PriceBook

    book = PriceBook()
    openai = book.price("gpt-4o-mini", "https://api.openai.com/v1")
    assert openai is not None and openai.input == pytest.approx(0.15) and openai.output == pytest.approx(0.6)
    assert book.price("gpt-4o-mini", "http://127.0.0.1:9/v1") == openai, "a local URL: by the name alone"
    assert book.price("no-such-model-anywhere", "https://api.openai.com/v1") is None


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("INPUT_PRICES", "{not json"),
        ("CONVY_PRICES", '{"m": {"input": -1, "output": 1}}'),
        ("INPUT_PRICES", '{"m": 3}'),
    ],
)
def test_bad_prices_are_exit_2_naming_the_setting(tmp_path: Path, where: str, text: str) -> None:
    project(tmp_path)
    done = convy(
        "run", "--agent-url", "http://127.0.0.1:9/x", "--user-model", "m", cwd=tmp_path, env={where: text}
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"prices ({where})" in done.stderr


def test_prices_from_a_table_in_pyproject(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.convy.prices]\nuser-m = {input = 2.0, output = 8.0}\n"judge-m" = {input = 1.5, output = 3.0}\n'
    )
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(f"{agent.url}/ok", models.url, tmp_path, "--repeat", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = lines(only_run(tmp_path / "results"))
    cost, user = line["cost"], line["user_usage"]
    assert isinstance(cost, dict) and isinstance(user, dict)
    assert cost["user"] == pytest.approx(usd(user, PRICES["user-m"]), rel=1e-9)


def test_a_bad_table_in_pyproject_is_exit_2_naming_it(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.convy.prices]\nuser-m = {input = "cheap"}\n')
    done = convy("run", "--agent-url", "http://127.0.0.1:9/x", "--user-model", "m", cwd=tmp_path)
    assert done.returncode == 2 and "[tool.convy] prices" in done.stderr


def test_the_budget_stops_starting_attempts_and_the_run_is_inconclusive(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    # each attempt costs well over $0.001 at these prices: the second cannot start within $0.0015
    dear = json.dumps({"user-m": {"input": 10.0, "output": 10.0}, "judge-m": {"input": 10.0, "output": 10.0}})
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "6",
            "--concurrency",
            "1",
            "--prices",
            dear,
            "--budget",
            "0.0015",
        )
        asked = len(models.requests)
    assert done.returncode == 3, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "stopped" and run["reason"] == "budget"
    assert run["spec"]["limits"]["budget"] == 0.0015
    played_lines = lines(folder)
    first = played_lines[0]["cost"]
    assert isinstance(first, dict) and first["user"] + first["judge"] > 0.00075
    # one conversation at a time: the second may open while the first is judged (in flight), and
    # none starts once the first's cost is known
    assert len(played_lines) <= 2, "none starts once spent + median passes the budget"
    judged = sum(1 for line in played_lines if not line["reused"])
    assert asked == len(played_lines) + judged, "a user call each, a judge call unless reused"
    assert "stopped: budget of $0.0015 reached after ≥ $" in done.stdout, "the agent has no price"
    assert "inconclusive" in done.stdout.lower()


def test_the_budget_lets_attempts_in_flight_finish(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    dear = json.dumps({"user-m": {"input": 10.0, "output": 10.0}, "judge-m": {"input": 10.0, "output": 10.0}})
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "20",
            "--concurrency",
            "4",
            "--prices",
            dear,
            "--budget",
            "0.0015",
        )
    assert done.returncode == 3, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    run = json.loads((folder / "run.json").read_text())
    got = lines(folder)
    assert run["status"] == "stopped" and run["reason"] == "budget"
    # the first four start together and every one of them finishes; none starts after them
    assert 1 <= len(got) <= 8 and all(isinstance(line["cost"], dict) for line in got)
    assert len(got) < 20


def test_a_budget_stop_of_a_failing_run_fails(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    def refused(request: dict[str, object]) -> str:
        return (
            '{"decisions": [{"pass": false, "reason": "no"}]}'
            if request.get("response_format")
            else "FINISHED"
        )

    project(tmp_path)
    dear = json.dumps({"user-m": {"input": 10.0, "output": 10.0}, "judge-m": {"input": 10.0, "output": 10.0}})
    with AgentServer() as agent, ModelServer(refused) as models:
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "6",
            "--concurrency",
            "1",
            "--prices",
            dear,
            "--budget",
            "0.0015",
        )
    assert done.returncode == 1, done.stdout + done.stderr
    run = json.loads((only_run(tmp_path / "results") / "run.json").read_text())
    assert run["status"] == "stopped" and run["reason"] == "budget"
    assert "nothing-held" in done.stdout and "budget of $0.0015" in done.stdout


def test_the_estimate_asks_nothing_and_prints_calls_tokens_and_cost(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path, scenarios=2)
    prices = json.dumps(PRICES)
    with AgentServer() as agent, ModelServer(decided) as models:
        first = played(f"{agent.url}/ok", models.url, tmp_path, "--repeat", "2", "--prices", prices)
        assert first.returncode == 0, first.stdout + first.stderr
        baseline = only_run(tmp_path / "results")
        before = len(models.requests)
        done = convy(
            "estimate",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--user-model",
            "user-m",
            "--judge-model",
            "judge-m",
            "--prices",
            prices,
            "--repeat",
            "3",
            "--baseline",
            str(baseline),
            cwd=tmp_path,
        )
        assert len(models.requests) == before, "the estimate asks no model"
    assert done.returncode == 0, done.stdout + done.stderr
    # each scenario's medians: the user's over its attempts, the judge's over those that asked it
    # (a verdict reused in the baseline says nothing of what a judge call costs)
    expected = 0.0
    for name in {str(line["scenario"]) for line in lines(baseline)}:
        mine = [line for line in lines(baseline) if line["scenario"] == name]
        users = [line["cost"]["user"] for line in mine]  # type: ignore[index]
        judges = [line["cost"]["judge"] for line in mine if not line["reused"]]  # type: ignore[index]
        assert judges, "some attempt of each scenario asked the judge"
        expected += 3 * (statistics.median(users) + statistics.median(judges))
    assert any(line["reused"] for line in lines(baseline)), "the baseline reused a verdict"
    assert "2 scenarios, 6 attempts" in done.stdout
    # each attempt of HELLO: the opening is scripted, the user finishes (1 call), the judge once
    assert "model calls  user 6 · judge 6 · agent 6" in done.stdout
    assert f"cost         ≥ {Dollars(expected).text()} (" in done.stdout, "the agent has no price"
    assert "agent unknown" in done.stdout
    assert "tokens" in done.stdout


def test_the_estimate_without_a_baseline_says_it_cannot_know(tmp_path: Path) -> None:
    project(tmp_path)
    done = convy(
        "estimate",
        "--agent-url",
        "http://127.0.0.1:9/nobody",
        "--model-url",
        "http://127.0.0.1:9/v1",
        "--user-model",
        "m",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cannot estimate" in done.stdout and "no baseline" in done.stdout


def test_the_action_s_dry_run_estimate_plays_nothing(tmp_path: Path) -> None:
    assert convy("run", "--demo", "--repeat", "1", cwd=tmp_path).returncode in (0, 1)
    baseline = only_run(tmp_path / "results")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "GITHUB_"))}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "convy_action",
            "--demo",
            "--dry-run",
            "--estimate",
            "--baseline",
            str(baseline),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "estimate for 'support'" in done.stdout and "cost" in done.stdout
    assert len(list((tmp_path / "results" / "support").iterdir())) == 1, "no new run folder"


def test_the_budget_counts_what_ended_plus_a_median_attempt() -> None:
    from convy.play.bench import FailFast
    from convy.play.budget import Budget

    def ended(cost: Cost | None) -> Outcome:
        held = Verdict(holds=True, claims=())
        return Outcome(
            scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=held, cost=cost
        )

    budget = Budget(1.0, FailFast(0))
    assert budget.cause == "", "nothing ended yet: the first attempts start"
    budget.seen(ended(Cost(user=0.2, judge=0.2, agent=None)), 10)
    assert budget.cause == "", "0.4 spent + 0.4 median is within 1.0"
    budget.seen(ended(None), 10)  # unknown: counts as nothing known
    assert budget.cause == ""
    budget.seen(ended(Cost(user=0.5, judge=0.0)), 10)
    assert budget.cause == "budget", "0.9 spent + 0.4 median passes 1.0"
    assert Budget(0.0, FailFast(0)).cause == "", "0 is no budget"


def test_a_resumed_run_s_earlier_attempts_count_toward_the_budget() -> None:
    from convy.play.bench import FailFast
    from convy.play.budget import Budget

    held = Verdict(holds=True, claims=())
    before = Outcome(
        scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=held, cost=Cost(user=0.6)
    )
    fail_fast = FailFast(1)
    budget = Budget(1.0, fail_fast).earlier([before])
    assert budget.cause == "budget" and fail_fast.ended == [], "fail-fast never sees earlier attempts"


def test_the_prices_setting_reads_json_and_the_flow_style_design_writes() -> None:
    from convy.errors import ConfigurationError
    from convy.project.prices import Price, PriceTable

    wanted = {"gpt-4o-mini": Price(input=0.15, output=0.6)}
    assert PriceTable.read('{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}').prices == wanted
    assert PriceTable.read("{gpt-4o-mini: {input: 0.15, output: 0.60}}").prices == wanted
    with pytest.raises(ConfigurationError, match="is not JSON"):
        PriceTable.read("{gpt-4o-mini: [")
    with pytest.raises(ConfigurationError, match="must map model names"):
        PriceTable.read("{gpt-4o-mini: {input: -1, output: 0.6}}")


def test_a_party_that_spent_nothing_costs_nothing_whatever_its_price() -> None:
    from convy.play.agent import Usage
    from convy.play.outcome import Reused, Turn
    from convy.play.price import UNPRICED

    replayed = Outcome(
        scenario="s",
        index=0,
        fingerprint="f",
        turns=(Turn(user="hi", agent="hello", seconds=0.1, replayed=True),),
        seconds=0.2,
        decision=Verdict(holds=True, claims=()),
        user_usage=Usage(input=0, output=0),
        judge_usage=Usage(input=0, output=0),
        reused=Reused(run="before", scenario="s", index=0),
    )
    assert UNPRICED.cost(replayed) == Cost(user=0.0, judge=0.0, agent=None), "no price needed for nothing"
    asked = msgspec.structs.replace(replayed, user_usage=Usage(input=10, output=2), judge_usage=Usage())
    assert UNPRICED.cost(asked) == Cost(user=None, judge=None, agent=None), "asked: unknown, never $0"


def test_the_budget_holds_attempts_back_for_what_those_in_flight_will_cost() -> None:
    """The first attempt plays alone; then one starts while the cost ended plus a median attempt for
    each in flight and itself stays within the budget, else it waits; once the cost ended plus one
    median attempt would pass the budget, nothing starts."""
    import asyncio

    from convy.play.bench import FailFast
    from convy.play.budget import Budget

    held = Verdict(holds=True, claims=())
    ended = Outcome(
        scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=held, cost=Cost(user=0.3)
    )

    async def scenario() -> list[str]:
        budget = Budget(1.0, FailFast(0))
        said: list[str] = []

        async def attempt(name: str) -> None:
            await budget.admit()
            said.append(f"{name} {budget.cause or 'starts'}")

        await attempt("first")
        second = asyncio.create_task(attempt("second"))
        await asyncio.sleep(0)
        assert said == ["first starts"], "the second waits until the first's cost is known"
        budget.seen(ended, 10)  # 0.3 spent: 0.3 + 0.3 × 2 in flight ≤ 1.0
        await second
        await attempt("third")
        fourth = asyncio.create_task(attempt("fourth"))  # 0.3 + 0.3 × 3 > 1.0: waits
        await asyncio.sleep(0)
        assert said == ["first starts", "second starts", "third starts"]
        budget.seen(ended, 10)  # 0.6 + 0.3 × 2 > 1.0: still waits
        await asyncio.sleep(0)
        assert len(said) == 3
        budget.seen(ended, 10)  # 0.9 + 0.3 > 1.0 with nothing in flight: stopped
        await fourth
        return said

    assert asyncio.run(scenario())[-1] == "fourth budget"


def test_a_budget_is_kept_with_many_conversations_at_once(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    project(tmp_path)
    project(tmp_path / "one")
    dear = json.dumps({"user-m": {"input": 10.0, "output": 10.0}, "judge-m": {"input": 10.0, "output": 10.0}})
    with AgentServer() as agent, ModelServer(decided) as models:
        first = played(f"{agent.url}/ok", models.url, tmp_path / "one", "--repeat", "1", "--prices", dear)
        assert first.returncode == 0, first.stdout + first.stderr
        (one,) = lines(only_run(tmp_path / "one" / "results"))
        cost = one["cost"]
        assert isinstance(cost, dict)
        each = cost["user"] + cost["judge"]
        budget = 3.5 * each
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "12",
            "--concurrency",
            "8",
            "--prices",
            dear,
            "--budget",
            f"{budget:.8f}",
        )
    assert done.returncode == 3, done.stdout + done.stderr
    got = lines(only_run(tmp_path / "results"))
    spent = sum(line["cost"]["user"] + line["cost"]["judge"] for line in got)  # type: ignore[index]
    assert spent <= budget, "attempts in flight were counted before more started"
    assert 3 <= len(got) < 12
