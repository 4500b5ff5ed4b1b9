"""Stage 2 of the action, GitHub's services: the REST API, the Actions results service, the run
folder zipped and unzipped safely, and the bounded retries of every request. Imports only `runner`."""
