"""What can go wrong in the action, as exceptions its stages raise and catch: every one derives
from ActionError. What the user must fix is the engine's ConfigurationError (exit 2).

    ActionError
     ├── Transient        github/retries.py    a request that may pass when sent again (retried)
     ├── GitHubError      github/rest.py       GitHub's REST API refused or failed a request
     ├── UnsafeArchive    github/zipped.py     an untrusted zip that would write outside its folder
     ├── ArtifactError    github/artifacts.py  the results service failed an upload or a download
     ├── AlreadyExists    github/artifacts.py  CreateArtifact met an artifact of that name
     ├── NotFound         github/artifacts.py  the service has no such artifact in this workflow run
     └── Unusable         baseline/readable.py a candidate's artifact cannot serve as a baseline
"""

from __future__ import annotations


class ActionError(Exception):
    """The base of every exception the action raises on purpose."""
