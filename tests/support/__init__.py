"""Helpers shared by the tests: what more than one test module needs, kept out of the test modules."""
