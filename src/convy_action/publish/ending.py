"""How a job ends once its run is reviewed: the run folder shelved, the comment built once and put in
its box, the job summary, the annotations, the JUnit XML file and the step's outputs written, and
the exit code the gate chose; a shard's job ends with its own comparison in the log and the
summary, no comment and no annotation (the merge job posts and gates)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy import Reviewed, Slice
from convy.runs import Links
from convy.tools import AtomicFile
from convy_action.github.artifacts import Uploaded, UploadedEarlier
from convy_action.publish.comment import LIMIT, Box, Marked, Posted, Skipped, Unposted
from convy_action.publish.shelf import NotUploaded, Shelf, Shelved
from convy_action.runner.context import Context
from convy_action.runner.log import Log
from convy_action.runner.outputs import Annotations, Results, StepOutputs
from convy_action.runner.settings import ActionSettings
from convy_action.runner.summary import JobSummary


class Ending(msgspec.Struct, frozen=True):
    """The end of a job in the runner's `context`, told in the job's `log`, as its `settings` say,
    its annotations relative to the project's `root`."""

    context: Context
    log: Log
    settings: ActionSettings
    root: Path

    def sharded(self, reviewed: Reviewed, shelf: Shelf, part: Slice) -> int:
        """A shard's end: its folder uploaded, its outputs and its job summary (its own comparison,
        the other shards' scenarios not played) written, no comment and no annotation (the merge job
        posts and gates); exit 0."""
        context = self.context
        folder = reviewed.run.folder
        body = reviewed.comment(Links(run=context.run_url()))
        AtomicFile(folder / "comment.md").write_text(body)
        reviewed.pages()
        junit = self.tested(reviewed)
        self.log.shown(f"convy: shard {part.text}'s own comparison", body)
        shelved = shelf.store(folder)
        self.told(shelved)
        artifact = shelved.id if isinstance(shelved, Uploaded) else 0
        now = reviewed.comparison.now
        told = (
            f"shard {part.text}: {len(reviewed.run.file.spec.scenarios)} scenarios played, pass rate "
            f"{now.rate.text()}; the merge job compares all shards, comments and gates"
        )
        self.log.line(f"convy: {told}")
        if context.step_summary:
            JobSummary(Path(context.step_summary)).append(f"**convy** {told}.\n\n{body}")
        self.outputs(reviewed, "", artifact, junit)
        return 0

    def reported(self, reviewed: Reviewed, shelf: Shelf, box: Box) -> int:
        """A whole run's end: its pages written, shelved, commented (the comment built once, with the
        links to what was shelved, and written once), summed up, annotated; the gate's exit code."""
        context = self.context
        folder = reviewed.run.folder
        reviewed.pages()
        junit = self.tested(reviewed)
        shelved = shelf.store(folder)
        self.told(shelved)
        body = Marked(reviewed.comparison.now.agent, self.settings.comment_key).marked(
            reviewed.comment(self.links(shelved, shelf, folder), limit=LIMIT)
        )
        comment = folder / "comment.md"
        AtomicFile(comment).write_text(body)
        self.log.shown("convy: the comparison", body)
        url = self.posted(box.put(body), body, comment)
        for annotation in Annotations(
            reviewed.comparison, reviewed.decision, self.root, context.workspace
        ).commands():
            self.log.command(annotation)
        decision = reviewed.decision
        cause = f"; commonest: {decision.cause}" if decision.cause else ""
        with self.log.untrusted():
            self.log.line(f"convy: {decision.verdict} ({decision.rule}): {decision.explanation}{cause}")
        self.outputs(reviewed, url, shelved.id if isinstance(shelved, Uploaded) else 0, junit)
        self.sent(reviewed)
        return decision.exit_code

    def links(self, shelved: Shelved, shelf: Shelf, folder: Path) -> Links:
        """What the comment links to: the run's log, and, once the folder was uploaded, its artifact
        and the pages' own artifacts."""
        context = self.context
        match shelved:
            case Uploaded(id=artifact):
                pages = shelf.pages(folder)
                if pages.refused:
                    self.log.warning(f"{pages.refused}; the comment links to the run's artifact instead")
                return Links(
                    report=context.artifact_url(artifact),
                    run=context.run_url(),
                    report_page=context.artifact_url(pages.report),
                    comparison_page=context.artifact_url(pages.comparison),
                )
            case _:
                return Links(report="", run=context.run_url())

    def posted(self, posted: Posted | Unposted | Skipped, body: str, comment: Path) -> str:
        """What became of the comment, in the log and the job summary; its URL when posted."""
        summary, url = body, ""
        match posted:
            case Posted(url=url, how=how):
                self.log.line(f"convy: pull request comment {how}: {url}")
            case Unposted(reason=reason, forbidden=forbidden):
                self.log.warning(
                    f"the pull request comment could not be posted ({reason}); it is in the job summary"
                    + (": a pull request from a fork gets a read-only token" if forbidden else "")
                )
                summary = f"> **The pull request comment could not be posted** ({reason}).\n\n{body}"
            case Skipped(why=why):
                self.log.line(f"convy: no pull request comment: {why}")
                self.log.line(f"convy: the comment is in {self.context.relative(comment)}")
        step_summary = self.context.step_summary
        if step_summary and not JobSummary(Path(step_summary)).append(summary):
            self.log.warning("the job summary was cut to the runner's limit of 1 MiB")
        return url

    def tested(self, reviewed: Reviewed) -> str:
        """The JUnit XML file the `junit` input names, written from the workspace; its path relative
        to the workspace, "" when none."""
        written = reviewed.tested(self.context.workspace)
        for path in written:
            self.log.line(f"convy: wrote the JUnit XML file {self.context.relative(path)}")
        return self.context.relative(written[0]) if written else ""

    def outputs(self, reviewed: Reviewed, comment_url: str, artifact: int, junit: str = "") -> None:
        """The step's outputs, when the runner takes them."""
        context = self.context
        if not context.output:
            return
        folder = reviewed.run.folder
        StepOutputs(Path(context.output)).write(
            Results(
                comparison=reviewed.comparison,
                verdict=reviewed.decision.verdict,
                run_dir=context.relative(folder),
                report=context.relative(folder / "report.html"),
                comment_url=comment_url,
                artifact_id=artifact,
                junit=junit,
            ).values()
        )

    def sent(self, reviewed: Reviewed) -> None:
        """The run sent to otlp-endpoint, when there is one, after the gate: a failure is a warning,
        never another exit code (the run folder has everything)."""
        settings = self.settings
        if not settings.otlp_endpoint:
            return
        from convy import ConfigurationError
        from convy.runs import Collector, ReceiverRefused, RunTraces
        from convy.tools import Untrusted

        try:
            collector = Collector.given(
                settings.otlp_endpoint, (settings.otlp_headers,), ("otlp-endpoint", "otlp-headers")
            )
            sent = collector.send(RunTraces(reviewed.run).attempts())
        except (ReceiverRefused, ConfigurationError) as error:
            why = Untrusted(text=str(error)).console(400)
            self.log.warning(f"the run was not sent to otlp-endpoint: {why}")
            return
        where = Untrusted(text=collector.endpoint.shown()).console(200)
        self.log.line(f"convy: sent {sent.traces} traces ({sent.spans} spans) to {where}")

    def told(self, shelved: Shelved) -> None:
        """What became of the run folder, in the log."""
        match shelved:
            case Uploaded(id=artifact, name=name, size=size):
                url = self.context.artifact_url(artifact)
                self.log.line(f"convy: uploaded the run folder as artifact {name} ({size} bytes): {url}")
            case UploadedEarlier(name=name):
                self.log.line(f"convy: an earlier attempt of this workflow run uploaded artifact {name}")
            case NotUploaded(reason=reason, failed=True):
                self.log.warning(f"the run folder was not uploaded: {reason}")
            case NotUploaded(reason=reason):
                self.log.line(f"convy: the run folder was not uploaded: {reason}")
