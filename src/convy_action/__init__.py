"""convy-action: the GitHub glue around the convy engine."""
