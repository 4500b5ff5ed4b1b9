"""Stage 5 of the action, the job's run: played (a re-run resumes what an earlier attempt left),
or merged from the shards' artifacts, then reviewed against the baseline. Imports any stage before
it."""
