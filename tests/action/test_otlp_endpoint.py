"""The action's `otlp-endpoint` (and `otlp-headers`): after the gate, the run goes to the receiver,
one trace per attempt; a receiver that refuses is a warning and the gate's exit code stands; a bad
URL or header line is exit 2 before anything is played; the headers' values are masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.github import FakeGitHub
from tests.servers.otlp import OtlpReceiver
from tests.support.job import Job

KEY = "Bearer phx-0123456789abcdef"


def test_the_run_is_sent_after_the_gate_with_its_headers_masked(fake: FakeGitHub, tmp_path: Path) -> None:
    with OtlpReceiver(wanted=("Authorization", KEY)) as receiver:
        job = Job(
            fake, tmp_path, 10, repeat="1", otlp_endpoint=receiver.url, otlp_headers=f"Authorization: {KEY}"
        )
        code, log = job.in_process()
    assert code == 0, log
    roots = [span for span in receiver.spans if not span.parent_id]
    assert len(roots) == len({span.trace_id for span in receiver.spans}) == 4  # the demo's 4 scenarios
    assert f"convy: sent 4 traces ({len(receiver.spans)} spans) to {receiver.url}/v1/traces" in log
    assert f"::add-mask::{KEY}" in log and "::add-mask::phx-0123456789abcdef" in log
    assert all(line.startswith("::add-mask::") for line in log.splitlines() if "phx-0123456789" in line)
    gate = log.index("convy: pass (")
    assert gate < log.index("convy: sent 4 traces")


def test_a_refusing_receiver_is_a_warning_and_the_gate_s_exit_code_stands(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    with OtlpReceiver(refuse=(400, "span limit exceeded")) as receiver:
        job = Job(fake, tmp_path, 10, repeat="1", otlp_endpoint=receiver.url)
        code, log = job.in_process()
    assert code == 0, log
    assert (
        f"::warning::the run was not sent to otlp-endpoint: {receiver.url}/v1/traces answered 400: "
        "span limit exceeded" in log
    )
    assert job.outputs()["verdict"] == "pass"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"INPUT_OTLP-ENDPOINT": "phoenix:6006"}, "otlp-endpoint: must be an http:// or https:// URL"),
        (
            {"INPUT_OTLP-ENDPOINT": "http://127.0.0.1:9", "INPUT_OTLP-HEADERS": "api_key=sk-0123456789"},
            "otlp-headers: line 1 is not `Name: value`",
        ),
    ],
)
def test_a_bad_endpoint_or_header_exits_2_before_anything_is_played(
    fake: FakeGitHub, tmp_path: Path, change: dict[str, str], named: str
) -> None:
    job = Job(fake, tmp_path, 10)
    job.environ |= change
    fake.seen.clear()
    code, log = job.in_process()
    assert code == 2, log
    (error,) = [line for line in log.splitlines() if line.startswith("::error ")]
    assert error.startswith(f"::error title=convy%3A configuration error::{named}")
    assert "sk-0123456789" not in log.replace("::add-mask::api_key=sk-0123456789", "")
    assert not (job.workspace / "results").exists()
