"""Ending: how a job ends once its run is reviewed — the run folder's files written, the folder put
on its shelf, the comment put in its box, the job summary, the annotations and the step's outputs
written, and the exit code the gate chose; a shard's job ends with its own comparison in the log
and the summary, no comment and no annotation (the merge job posts and gates)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy.conduct.assembly import Project
from convy.conduct.review import Reviewed
from convy.project.shard import Slice
from convy.store.atomic import AtomicFile
from convy_action.github.artifacts import Uploaded, UploadedEarlier
from convy_action.publish.comment import LIMIT, Box, Marked, Posted, Skipped, Unposted
from convy_action.publish.shelf import NotUploaded, Shelf, Shelved
from convy_action.runner.context import Context
from convy_action.runner.log import Log
from convy_action.runner.outputs import Annotations, Results, StepOutputs
from convy_action.runner.summary import JobSummary


class Ending(msgspec.Struct, frozen=True):
    """The end of a job in the runner's `context`, told in the job's `log`."""

    context: Context
    log: Log

    def sharded(self, reviewed: Reviewed, shelf: Shelf, part: Slice) -> int:
        """A shard's end: its folder uploaded, its outputs and its job summary (its own comparison,
        the other shards' scenarios not played) written, no comment and no annotation (the merge job
        posts and gates); exit 0."""
        from convy.draw.links import Links

        context = self.context
        folder = reviewed.run.folder
        reviewed.written(Links(run=context.run_url()))
        body = (folder / "comment.md").read_text(encoding="utf-8")
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

    def reported(self, reviewed: Reviewed, shelf: Shelf, box: Box, project: Project) -> int:
        """A whole run's end: written, shelved, commented, summed up, annotated; the gate's exit code."""
        from convy.draw.links import Links
        from convy.draw.markdown import CommentMarkdown

        context = self.context
        folder = reviewed.run.folder
        run_url = context.run_url()
        links = Links(report="", run=run_url)
        reviewed.written(links)
        comment = folder / "comment.md"
        shelved = shelf.store(folder)
        self.told(shelved)
        match shelved:
            case Uploaded(id=artifact):
                pages = shelf.pages(folder)
                if pages.refused:
                    self.log.warning(f"{pages.refused}; the comment links to the run's artifact instead")
                links = Links(
                    report=context.artifact_url(artifact),
                    run=run_url,
                    report_page=context.artifact_url(pages.report),
                    comparison_page=context.artifact_url(pages.comparison),
                )
            case _:
                artifact = 0
        body = CommentMarkdown(
            reviewed.comparison, reviewed.decision, reviewed.linked(links), limit=LIMIT
        ).text()
        body = Marked(reviewed.comparison.now.agent, project.settings.comment_key).marked(body)
        AtomicFile(comment).write_text(body)
        self.log.shown("convy: the comparison", body)
        posted = box.put(body)
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
                self.log.line(f"convy: the comment is in {context.relative(comment)}")
        if context.step_summary and not JobSummary(Path(context.step_summary)).append(summary):
            self.log.warning("the job summary was cut to the runner's limit of 1 MiB")
        for annotation in Annotations(
            reviewed.comparison, reviewed.decision, project.root, context.workspace
        ).commands():
            self.log.command(annotation)
        decision = reviewed.decision
        cause = f"; commonest: {decision.cause}" if decision.cause else ""
        with self.log.untrusted():
            self.log.line(f"convy: {decision.verdict} ({decision.rule}): {decision.explanation}{cause}")
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
        self.sent(reviewed, project)
        return decision.exit_code

    def sent(self, reviewed: Reviewed, project: Project) -> None:
        """The run sent to otlp-endpoint, when there is one, after the gate: a failure is a warning,
        never another exit code (the run folder has everything)."""
        settings = project.settings
        if not settings.otlp_endpoint:
            return
        from convy.draw.untrusted import Untrusted
        from convy.errors import ConfigurationError
        from convy.store.otlp import Collector, ReceiverRefused
        from convy.store.traces import RunTraces

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
