"""`convy init`: a starter project written into a folder — three scenarios, an agent file and the
workflow, whose branch is the repository's default one — never over a file that is there."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from convy import ConfigurationError


class Starter:
    """The project template of `convy init`, written with its lines told on `out`."""

    def __init__(self, template: Path, out: TextIO) -> None:
        self._template = template
        self._out = out

    def written(self, folder: Path) -> None:
        """The template written into `folder`; ConfigurationError, before any file is written, when
        one of them is there already (a .gitignore only gets `results/` added)."""
        template = self._template
        files = [p for p in sorted(template.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        ignored = folder / ".gitignore"
        for path in files:
            target = folder / path.relative_to(template)
            if target.exists() and target != ignored:
                raise ConfigurationError(str(target), "exists already: convy init never overwrites")
        branch = DefaultBranch(folder).name()
        for path in files:
            target = folder / path.relative_to(template)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target == ignored and target.exists():
                kept = target.read_text(encoding="utf-8")
                if "results/" not in kept.split():
                    target.write_text(kept.rstrip("\n") + "\nresults/\n", encoding="utf-8")
                    self._out.write(f"added results/ to {target}\n")
                continue
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".yml" and branch != "main":
                text = text.replace("branches: [main]", f"branches: [{branch}]")
            target.write_text(text, encoding="utf-8")
            self._out.write(f"wrote {target}\n")
        self._out.write(
            "\nNext: point agents/example.yaml at your agent, then\n"
            "  convy run --model-key $OPENAI_API_KEY --user-model gpt-4o-mini\n"
            "For CI (.github/workflows/convy.yml), give the repository the secrets OPENAI_API_KEY and\n"
            "AGENT_TOKEN and the variable AGENT_URL (Settings → Secrets and variables → Actions).\n"
        )


class DefaultBranch:
    """The default branch of the git repository a folder is in, for the workflow `convy init`
    writes (its pushes build the baselines): origin's HEAD, else git's init.defaultBranch, else
    `main`."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def name(self) -> str:
        import subprocess

        for command in (
            ["git", "symbolic-ref", "--short", "refs/remotes/origin/HEAD"],
            ["git", "config", "--get", "init.defaultBranch"],
        ):
            try:
                done = subprocess.run(
                    command, cwd=self._folder, capture_output=True, text=True, timeout=10, check=False
                )
            except (OSError, subprocess.SubprocessError):
                return "main"
            found = done.stdout.strip().removeprefix("origin/")
            if done.returncode == 0 and found and all(c.isalnum() or c in "-_./" for c in found):
                return found
        return "main"
