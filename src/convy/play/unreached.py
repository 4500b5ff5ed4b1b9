"""Why no connection could be made to a service (the agent, a model): refused, a name not resolved,
TLS failed. Such a service is not busy but not there: a setup mistake, never waited for."""

from __future__ import annotations

import httpx
import msgspec


class ConnectProblem(msgspec.Struct, frozen=True):
    """Why no connection could be made, in a few words: refused, a name not resolved, TLS."""

    error: httpx.ConnectError

    def text(self) -> str:
        """` (why)`, or "" when the error does not say."""
        said = str(self.error).lower()
        if "certificate" in said or "ssl" in said or "tls" in said:
            return " (TLS failed: the certificate could not be checked)"
        if (
            "name or service not known" in said
            or "nodename nor servname" in said
            or "name resolution" in said
            or "no address associated" in said
        ):
            return " (its host name is not known)"
        if "refused" in said or "connect call failed" in said or "all connection attempts failed" in said:
            return " (connection refused)"
        return ""
