"""Stage 3 of the action, finding the baseline: `auto` (an earlier workflow run's artifact), a
workflow run named by its id, a run folder on disk (dry runs) or none, each read back and checked
before anything is played. Imports `runner` and `github`."""
