"""The action's image is locked: requirements.lock pins every runtime dependency of pyproject.toml
and of its `otel` extra (and what builds the package) with hashes, the Dockerfile installs it with
--require-hashes and fetches nothing else, and the lock is what its documented command regenerates."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent.parent
LOCK = ROOT / "requirements.lock"
COMMAND = (
    "pip-compile --all-build-deps --allow-unsafe --extra=otel --generate-hashes --no-emit-find-links "
    "--no-emit-index-url --output-file=requirements.lock --strip-extras pyproject.toml"
)
EXTRAS = ("otel",)
"""The extras the image installs too: OpenTelemetry, for otlp-endpoint."""


class Locked:
    """requirements.lock read: each package's pinned version, hashes and the `# via` lines."""

    def __init__(self, text: str) -> None:
        self.pins: dict[str, str] = {}
        self.hashes: dict[str, list[str]] = {}
        self.via: dict[str, list[str]] = {}
        current = ""
        for line in text.splitlines():
            pinned = re.match(r"^([A-Za-z0-9._-]+)==(\S+) \\$", line)
            if pinned:
                current = canonicalize_name(pinned[1])
                self.pins[current] = pinned[2]
                self.hashes[current], self.via[current] = [], []
            elif found := re.match(r"^\s+--hash=sha256:([0-9a-f]{64})", line):
                self.hashes[current].append(found[1])
            elif found := re.match(r"^\s+#\s+(?:via\s+)?(\S.*)$", line):
                if current and found[1] != "via":
                    self.via[current].append(found[1].strip())
            elif line.strip() and not line.startswith("#"):
                raise AssertionError(f"an unexpected line in requirements.lock: {line!r}")

    def direct(self, source: str) -> set[str]:
        return {name for name, via in self.via.items() if f"convy-action ({source})" in via}


def project() -> dict[str, object]:
    data: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return data


def test_the_lock_pins_exactly_pyproject_s_dependencies_within_their_ranges() -> None:
    locked = Locked(LOCK.read_text())
    declared = project()["project"]
    extras = [text for extra in EXTRAS for text in declared["optional-dependencies"][extra]]  # type: ignore[index]
    wanted = [Requirement(text) for text in [*declared["dependencies"], *extras]]  # type: ignore[index]
    assert locked.direct("pyproject.toml") == {canonicalize_name(r.name) for r in wanted}
    for requirement in wanted:
        version = locked.pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version, prereleases=True), (requirement, version)


def test_the_lock_pins_what_builds_the_package() -> None:
    locked = Locked(LOCK.read_text())
    build = [Requirement(text) for text in project()["build-system"]["requires"]]  # type: ignore[index]
    names = {canonicalize_name(r.name) for r in build}
    assert locked.direct("pyproject.toml::build-system.requires") == names
    for requirement in build:
        assert requirement.specifier.contains(locked.pins[canonicalize_name(requirement.name)])


def test_every_locked_package_has_hashes_and_nothing_is_left_loose() -> None:
    locked = Locked(LOCK.read_text())
    assert len(locked.pins) >= 8
    for name, hashes in locked.hashes.items():
        assert hashes, f"{name} has no hash"
        assert locked.via[name], f"{name} is locked but nothing needs it"
    text = LOCK.read_text()
    assert "--index-url" not in text and "--find-links" not in text and "file://" not in text


def test_the_lock_says_the_command_that_regenerates_it_and_the_action_page_too() -> None:
    assert f"#    {COMMAND}\n" in LOCK.read_text()
    assert COMMAND in (ROOT / "docs" / "action.md").read_text()


def test_the_dockerfile_installs_the_lock_with_hashes_and_fetches_nothing_else() -> None:
    text = (ROOT / "Dockerfile").read_text()
    instructions: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        pending += " " + line.strip().removesuffix("\\")
        if not line.rstrip().endswith("\\"):
            instructions.append(pending.strip())
            pending = ""
    shell = [part.strip() for i in instructions if i.startswith("RUN ") for part in i[4:].split("&&")]
    installs = [part.split("pip install ", 1)[1] for part in shell if "pip install " in part]
    assert len(installs) == 2, installs
    locked, package = (install.split() for install in installs)
    assert "--require-hashes" in locked and "--only-binary=:all:" in locked
    assert locked[-2:] == ["-r", "/opt/convy-action/requirements.lock"]
    assert {"--no-index", "--no-deps", "--no-build-isolation"} <= set(package)
    assert "COPY requirements.lock /opt/convy-action/requirements.lock" in text
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "!requirements.lock" in ignored
