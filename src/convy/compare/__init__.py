"""Stage 4, the numbers: statistics, a run summed up, the comparison with a baseline, the gate.
Every figure is computed here once. Imports only the stages before it."""
