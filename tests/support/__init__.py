"""Helpers shared by tests: servers, folders and the command as a user runs it."""
