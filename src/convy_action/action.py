"""Action: the GitHub Action's composition root — inputs and context read and checked,
the baseline found, the scenarios played, the run folder uploaded, compared, the comment posted, the
job summary and the outputs written, the exit code chosen by the gate (0 pass, 1 fail, 2
configuration error, 3 inconclusive). The only place of the action that prints."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO

import httpx

from convy.compare.comparison import NoBaseline, RunsDiffer
from convy.draw.markdown import Marker
from convy.draw.progress import Printed
from convy.draw.untrusted import Untrusted
from convy.errors import ConfigurationError
from convy.project.settings import Settings
from convy.project.shard import Slice
from convy.run.assembly import Project
from convy.run.review import Review, Reviewed
from convy.run.run import Run, RunId
from convy.run.session import Prepared, Session
from convy.run.stop import Stop
from convy.store.atomic import AtomicFile
from convy.store.journal import RunInUse
from convy.store.runs import Runs, StoredRun
from convy_action.artifacts import ResultsService, Uploaded, UploadedEarlier
from convy_action.baseline import Looked, Wanted
from convy_action.comment import LIMIT, Box, CommentWhen, Marked, Posted, Skipped, StickyComment, Unposted
from convy_action.context import Context, Event
from convy_action.dry import KeptFolder, ShownComment
from convy_action.github import GitHub
from convy_action.inputs import AgentSecrets, Inputs, Masks
from convy_action.outputs import Annotations, Command, Results, StepOutputs, Stopped
from convy_action.rerun import Earlier
from convy_action.retries import PATIENT, Retries
from convy_action.shards import RestShelves, RunnerShelves, ShardArtifacts, ShardName, Shelves
from convy_action.shelf import ArtifactName, ArtifactShelf, NotUploaded, Retention, Shelf, Shelved
from convy_action.summary import JobSummary

EXIT_CONFIG, EXIT_INTERRUPTED = 2, 130


class Log:
    """The job's log: plain lines, workflow commands, and text the action does not trust printed
    with workflow commands switched off."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def command(self, command: Command) -> None:
        self.line(command.text())

    def warning(self, text: str) -> None:
        self.command(Command("warning", text))

    @contextlib.contextmanager
    def untrusted(self) -> Iterator[None]:
        stopped = Stopped.new()
        self.line(stopped.start)
        try:
            yield
        finally:
            self.line(stopped.end)

    def shown(self, title: str, text: str) -> None:
        """`text` (agent and model words included) folded under `title`, commands off."""
        self.command(Command("group", title))
        with self.untrusted():
            self.line(text.rstrip("\n"))
        self.command(Command("endgroup"))


class Action:
    """One invocation of the action: arguments, environment, log stream, working folder, and the
    retries of its requests to GitHub."""

    def __init__(
        self,
        argv: Sequence[str],
        environ: Mapping[str, str],
        out: TextIO,
        folder: Path,
        retries: Retries = PATIENT,
    ) -> None:
        self._argv = tuple(argv)
        self._environ = dict(environ)
        self._log = Log(out)
        self._folder = folder
        self._retries = retries

    def exit_code(self) -> int:
        inputs = Inputs(self._argv, self._environ, self._folder)
        refused: ConfigurationError | None = None
        try:
            flags = inputs.flags()
        except ConfigurationError as error:
            flags, refused = {}, error
        for value in Masks(flags, self._environ).values():
            self._log.command(Command("add-mask", value))
        try:
            if refused is not None:
                raise refused
            return self.acted(inputs, flags)
        except ConfigurationError as error:
            shown = Untrusted(text=str(error)).logged()
            self._log.command(Command("error", shown, (("title", "convy: configuration error"),)))
            return EXIT_CONFIG

    def acted(self, inputs: Inputs, flags: dict[str, object]) -> int:
        from convy.demo.servers import DemoServers

        settings = inputs.settings(flags)
        with contextlib.ExitStack() as stack:
            if settings.demo:
                demo = stack.enter_context(DemoServers())
                results = str(self._folder / settings.results)
                flags = {**demo.flags(), **flags, "results": results, "project": str(demo.project)}
                inputs = Inputs(self._argv, {**self._environ, **demo.environ()}, self._folder)
                settings = inputs.settings(flags)
            context = Context(self._environ, self._folder)
            if not settings.dry_run:
                context.check()
            event = context.event()
            project = Project(settings, inputs.sources(flags), inputs.environ)
            part = Slice.read(settings.shard)
            if settings.merge:
                self.check_merge(settings, part, context)
                agent = "" if settings.artifact_name else self.agent_if_known(project)
                prepared = None
            else:
                prepared = Session(project=project).prepared()
                agent = prepared.name
                for value in AgentSecrets(prepared.agent).values():
                    self._log.command(Command("add-mask", value))
            name = ArtifactName(settings.artifact_name, agent, settings.comment_key)
            name.check()
            self.check_token(settings, event)
            client = stack.enter_context(httpx.Client(timeout=30.0))
            github = (
                GitHub(context.api_url, settings.github_token, context.repository, client, self._retries)
                if context.repository and settings.github_token
                else None
            )
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="convy-baseline-")))
            if settings.merge and not settings.artifact_name and not agent:
                key = Marker(agent="").safe(settings.comment_key)
                found = self.shard_artifacts(context, client, github, "", scratch).guessed(key)
                self._log.line(f"convy: the project names no agent; merging the shards of {found}")
                name = ArtifactName(found, "")
            looked = (
                Wanted(
                    value=settings.baseline,
                    dry_run=settings.dry_run,
                    folder=self._folder,
                    github=github,
                    workflow=context.workflow,
                    branch=context.baseline_branch(settings.baseline_branch, event),
                    name=name.text,
                    current=context.run_id,
                    scratch=scratch,
                )
                .baseline()
                .looked()
            )
            for note in looked.notes:
                self._log.warning(f"baseline: {note}")
            self._log.line(f"convy: baseline: {looked.source or self.why(looked)}")
            shelf = self.shelf(settings, context, client, ShardName(name.text, part).text)
            if prepared is not None:
                prepared, shelf = self.resumed(prepared, project, context, shelf, scratch, part.text)
            if prepared is None:
                merged = self.merged(context, client, github, name.text, scratch, project)
                reviewed = self.reviewed(merged.folder, looked, settings)
                box = self.box(settings, event, github, merged.file.spec.agent, reviewed)
                return self.reported(reviewed, context, shelf, box, project)
            try:
                run = self.played(prepared, context, event, looked)
            except (KeyboardInterrupt, asyncio.CancelledError):
                self._log.warning(
                    f"interrupted: the partial run folder is {context.relative(prepared.folder)}"
                )
                self.told(shelf.store(prepared.folder), context)
                return EXIT_INTERRUPTED
            reviewed = self.reviewed(run.journal.folder, looked, settings)
            if not part.whole:
                return self.sharded(reviewed, context, shelf, part)
            box = self.box(settings, event, github, prepared.name, reviewed)
            return self.reported(reviewed, context, shelf, box, project)
        return EXIT_CONFIG

    def resumed(
        self, prepared: Prepared, project: Project, context: Context, shelf: Shelf, scratch: Path, shard: str
    ) -> tuple[Prepared, Shelf]:
        """On a re-run (GITHUB_RUN_ATTEMPT > 1), the unfinished run of this workflow run — a partial
        folder in the workspace, else the artifact an earlier attempt uploaded — prepared to be
        resumed (only its missing attempts are played), and a shelf that replaces the artifact."""
        if context.run_attempt <= 1 or not context.run_id:
            return prepared, shelf
        earlier = Earlier(
            results=prepared.folder.parent,
            run=str(context.run_id),
            agent=prepared.name,
            shard=shard,
            name=shelf.name if isinstance(shelf, ArtifactShelf) else "",
            service=shelf.service if isinstance(shelf, ArtifactShelf) else None,
            scratch=scratch / "earlier",
        )
        found = earlier.found()
        for note in found.notes:
            self._log.warning(f"re-run: {note}")
        if found.folder is None:
            return prepared, shelf
        self._log.line(
            f"convy: attempt {context.run_attempt} of this workflow run resumes {found.source}: "
            f"{context.relative(found.folder)}"
        )
        resumed = Session(project=project, resume=found.folder).prepared()
        return resumed, shelf.replacing() if isinstance(shelf, ArtifactShelf) else shelf

    def check_merge(self, settings: Settings, part: Slice, context: Context) -> None:
        """ConfigurationError when `merge` cannot be followed here."""
        if not part.whole:
            raise ConfigurationError(
                "merge", "and shard are both set: a job is one shard (`shard: k/n`) or the merge, not both"
            )
        if settings.dry_run:
            raise ConfigurationError(
                "merge",
                "needs the shards' artifacts of a workflow run, which a dry run does not read: "
                "merge run folders on disk with `convy merge RUN… --to FOLDER`",
            )
        if not context.results_url or not context.runtime_token:
            raise ConfigurationError(
                "merge",
                "needs ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL to read the shards' artifacts "
                "(the runner gives them to actions started with `uses:`)",
            )

    def merged(
        self,
        context: Context,
        client: httpx.Client,
        github: GitHub | None,
        name: str,
        scratch: Path,
        project: Project,
    ) -> StoredRun:
        """Every shard's artifact of this workflow run, fetched and merged into a new run folder."""
        shards = self.shard_artifacts(context, client, github, name, scratch).shards()
        agent = shards.runs[0].file.spec.agent
        folder = project.results / agent / RunId.new().text
        merged = shards.merged(folder)
        self._log.line(
            f"convy: merged {len(shards.runs)} shards ({', '.join(shards.names)}) into "
            f"{context.relative(folder)} ({merged.file.status})"
        )
        return merged

    def shard_artifacts(
        self, context: Context, client: httpx.Client, github: GitHub | None, name: str, scratch: Path
    ) -> ShardArtifacts:
        """The shards' artifacts of this workflow run: from the results service, else the REST API."""
        service = ResultsService(
            context.results_url, context.runtime_token, client, context.run_attempt, self._retries
        )
        shelves: tuple[Shelves, ...] = (RunnerShelves(service),)
        if github is not None:
            shelves += (RestShelves(github, context.run_id),)
        return ShardArtifacts(shelves, name, scratch / "shards")

    def agent_if_known(self, project: Project) -> str:
        """The project's agent, or "" when the merge job's project does not say (not checked out)."""
        try:
            return project.agent_name()
        except ConfigurationError:
            return ""

    def sharded(self, reviewed: Reviewed, context: Context, shelf: Shelf, part: Slice) -> int:
        """A shard's end: its folder uploaded, its outputs and its job summary (its own comparison,
        the other shards' scenarios not played) written, no comment and no annotation (the merge job
        posts and gates); exit 0."""
        from convy.draw.markdown import Links

        folder = reviewed.run.folder
        reviewed.written(Links(run=context.run_url()))
        body = (folder / "comment.md").read_text(encoding="utf-8")
        self._log.shown(f"convy: shard {part.text}'s own comparison", body)
        shelved = shelf.store(folder)
        self.told(shelved, context)
        artifact = shelved.id if isinstance(shelved, Uploaded) else 0
        now = reviewed.comparison.now
        told = (
            f"shard {part.text}: {len(reviewed.run.file.spec.scenarios)} scenarios played, pass rate "
            f"{now.rate.text()}; the merge job compares all shards, comments and gates"
        )
        self._log.line(f"convy: {told}")
        if context.step_summary:
            JobSummary(Path(context.step_summary)).append(f"**convy** {told}.\n\n{body}")
        if context.output:
            StepOutputs(Path(context.output)).write(
                Results(
                    comparison=reviewed.comparison,
                    verdict=reviewed.decision.verdict,
                    run_dir=context.relative(folder),
                    report=context.relative(folder / "report.html"),
                    artifact_id=artifact,
                ).values()
            )
        return 0

    def check_token(self, settings: Settings, event: Event) -> None:
        """ConfigurationError when GitHub must be asked (the comment, the baseline) without a token."""
        if settings.dry_run or settings.github_token:
            return
        needs = []
        if settings.comment and event.pull().number and not settings.shard:
            needs.append("the pull request comment")
        if settings.baseline.strip() != "none":
            needs.append(f"the baseline ({settings.baseline.strip()})")
        if needs:
            raise ConfigurationError(
                "github-token",
                f"is empty, and {' and '.join(needs)} need it: pass the workflow's token (the default "
                "`${{ github.token }}`) with permissions `actions: read` and `pull-requests: write`, "
                "or set `baseline: none` and `comment: false`",
            )

    def why(self, looked: Looked) -> str:
        match looked.baseline:
            case NoBaseline(why=why):
                return f"none ({why})"
            case _:
                return "found"

    def shelf(self, settings: Settings, context: Context, client: httpx.Client, name: str) -> Shelf:
        if settings.dry_run:
            return KeptFolder("a dry run uploads nothing")
        if not context.results_url or not context.runtime_token:
            self._log.warning(
                "ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set, so the run folder will not be "
                "uploaded (the runner gives them to actions started with `uses:`, not to `run:` steps)"
            )
            return KeptFolder("the runner gave no artifact token")
        retention = Retention(settings.retention_days, context.retention_days)
        if retention.lowered():
            self._log.warning(
                f"retention-days {retention.asked} is more than the repository allows; "
                f"the artifact is kept {retention.days()} days"
            )
        service = ResultsService(
            context.results_url, context.runtime_token, client, context.run_attempt, self._retries
        )
        return ArtifactShelf(service, name, retention.days())

    def box(
        self, settings: Settings, event: Event, github: GitHub | None, agent: str, reviewed: Reviewed
    ) -> Box:
        number = event.pull().number
        if settings.dry_run:
            return ShownComment("a dry run posts nothing: the comment is shown above and in comment.md")
        if not settings.comment:
            return ShownComment("comment: false")
        if not number or github is None:
            return ShownComment("the event is not about a pull request")
        held_back = CommentWhen(settings.comment_when).held_back(reviewed.comparison, reviewed.decision)
        return StickyComment(github, number, agent, key=settings.comment_key, held_back=held_back)

    def played(self, prepared: Prepared, context: Context, event: Event, looked: Looked) -> Run:
        log = self._log

        shown: list[Printed] = []

        def watch(run: Run, missing: int) -> Printed:
            if shown:
                log.line(f"convy: {missing} more attempts where the comparison is unclear")
                shown[0].more(missing)
                return shown[0]
            log.line(
                f"convy: {missing} attempts of {len(run.spec.expected())} to play against "
                f"{Untrusted(text=run.spec.agent).console(200)!r} → {context.relative(run.journal.folder)}"
            )
            shown.append(Printed(missing, log.out, False))
            return shown[0]

        async def play() -> Run:
            task = asyncio.current_task()
            if task is None:
                return await prepared.play(context.provenance(event), watch, looked.baseline)
            with Stop(task).installed():
                return await prepared.play(context.provenance(event), watch, looked.baseline)

        with log.untrusted():
            try:
                return asyncio.run(play())
            except RunInUse as error:
                raise ConfigurationError("run", str(error)) from None

    def reviewed(self, folder: Path, looked: Looked, settings: Settings) -> Reviewed:
        stored = Runs(folder.parent).one(folder)
        try:
            return Review.gated(stored, looked.baseline, settings).reviewed()
        except RunsDiffer as error:
            self._log.warning(f"baseline {looked.source} is not comparable: {error}")
            return Review.gated(stored, NoBaseline(why=str(error)), settings).reviewed()

    def reported(self, reviewed: Reviewed, context: Context, shelf: Shelf, box: Box, project: Project) -> int:
        from convy.draw.markdown import CommentMarkdown, Links

        folder = reviewed.run.folder
        run_url = context.run_url()
        links = Links(report="", run=run_url)
        reviewed.written(links)
        comment = folder / "comment.md"
        shelved = shelf.store(folder)
        self.told(shelved, context)
        match shelved:
            case Uploaded(id=artifact):
                links = Links(report=context.artifact_url(artifact), run=run_url)
            case _:
                artifact = 0
        body = CommentMarkdown(reviewed.comparison, reviewed.decision, links, limit=LIMIT).text()
        body = Marked(reviewed.comparison.now.agent, project.settings.comment_key).marked(body)
        AtomicFile(comment).write_text(body)
        self._log.shown("convy: the comparison", body)
        posted = box.put(body)
        summary, url = body, ""
        match posted:
            case Posted(url=url, how=how):
                self._log.line(f"convy: pull request comment {how}: {url}")
            case Unposted(reason=reason, forbidden=forbidden):
                self._log.warning(
                    f"the pull request comment could not be posted ({reason}); it is in the job summary"
                    + (": a pull request from a fork gets a read-only token" if forbidden else "")
                )
                summary = f"> **The pull request comment could not be posted** ({reason}).\n\n{body}"
            case Skipped(why=why):
                self._log.line(f"convy: no pull request comment: {why}")
                self._log.line(f"convy: the comment is in {context.relative(comment)}")
        if context.step_summary and not JobSummary(Path(context.step_summary)).append(summary):
            self._log.warning("the job summary was cut to the runner's limit of 1 MiB")
        for annotation in Annotations(
            reviewed.comparison, reviewed.decision, project.root, context.workspace
        ).commands():
            self._log.command(annotation)
        decision = reviewed.decision
        cause = f"; commonest: {decision.cause}" if decision.cause else ""
        with self._log.untrusted():
            self._log.line(f"convy: {decision.verdict} ({decision.rule}): {decision.explanation}{cause}")
        if context.output:
            StepOutputs(Path(context.output)).write(
                Results(
                    comparison=reviewed.comparison,
                    verdict=decision.verdict,
                    run_dir=context.relative(folder),
                    report=context.relative(folder / "report.html"),
                    comment_url=url,
                    artifact_id=artifact,
                ).values()
            )
        return decision.exit_code

    def told(self, shelved: Shelved, context: Context) -> None:
        match shelved:
            case Uploaded(id=artifact, name=name, size=size):
                url = context.artifact_url(artifact)
                self._log.line(f"convy: uploaded the run folder as artifact {name} ({size} bytes): {url}")
            case UploadedEarlier(name=name):
                self._log.line(f"convy: an earlier attempt of this workflow run uploaded artifact {name}")
            case NotUploaded(reason=reason, failed=True):
                self._log.warning(f"the run folder was not uploaded: {reason}")
            case NotUploaded(reason=reason):
                self._log.line(f"convy: the run folder was not uploaded: {reason}")
