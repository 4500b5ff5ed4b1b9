"""Stage 4 of the action, publishing: where the run folder goes (the workflow run's artifact) and
where the comment goes (the pull request's sticky comment), their stand-ins, and the job's end.
Imports the stages before it."""
