"""Stage 1 of the action, what the runner gives and takes: the inputs and the runner's variables
(the event among them) read and checked, the job's log, the step's outputs and commands, the job
summary. Imports no later stage."""
