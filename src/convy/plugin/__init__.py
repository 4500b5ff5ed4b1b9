"""convy's pytest plugin: a project's scenarios as pytest items, played in one run by the engine."""
