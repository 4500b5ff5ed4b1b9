"""Stage 2, playing: the agent over HTTP, the models, prompts, busy services, the dialogue, one
attempt and what it leaves, the bench that plays attempts concurrently. Imports only `project`."""
