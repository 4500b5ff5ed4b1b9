"""Stage 5, drawing: markdown, console, HTML pages, tables, untrusted text made safe. Draws the
numbers of `compare`, computes none. Imports only the stages before it."""
