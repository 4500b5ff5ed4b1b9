"""Stage 3, the run folder: written as attempts end (run.json, attempts.jsonl, run.lock) and read
back. Imports only `project` and `play`."""
