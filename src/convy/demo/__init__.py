"""The built-in demo: a bundled example project, a small support bot served over real HTTP, and
scripted user and judge models behind a local OpenAI-compatible server."""
