"""Stage 1, the user's project read: scenario files (with file:line for every error) and settings.
Imports nothing of the later stages."""
