"""Stage 6, a run as a command plays it: the user's agent and models assembled, the run folder
played or resumed, reviewed and its files written. Imports any stage before it."""
