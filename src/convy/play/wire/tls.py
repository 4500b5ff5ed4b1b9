"""How an agent's HTTPS is checked: a CA bundle to trust and a client certificate, each a file one
of its settings names."""

from __future__ import annotations

import pathlib
import ssl

import httpx
import msgspec

from convy.data import Declared
from convy.errors import ConfigurationError


class Tls(Declared, frozen=True, kw_only=True):
    """How the agent's HTTPS is checked: `ca`, a CA bundle to trust instead of the system's; `cert`
    (and `key`, unless the cert file holds it), a client certificate. Paths are relative to the
    project folder."""

    ca: str = ""
    cert: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        if self.key and not self.cert:
            raise ValueError("tls.key needs tls.cert, the client certificate it belongs to")

    def context(self, base: pathlib.Path) -> ssl.SSLContext | bool:
        """The SSL context for the agent's connections, made once and shared by every conversation
        (making one loads the CA bundle, tens of milliseconds); httpx's checks when nothing is
        configured. A file that is missing or unreadable is a ConfigurationError."""
        if not self.ca and not self.cert:
            return httpx.create_ssl_context()
        context = ssl.create_default_context()
        if self.ca:
            ca = TlsFile("tls.ca", self.ca).path(base)
            try:
                context.load_verify_locations(cafile=ca)
            except (ssl.SSLError, OSError, ValueError):
                raise ConfigurationError("tls.ca", f"{self.ca} holds no readable CA certificate") from None
        if self.cert:
            cert = TlsFile("tls.cert", self.cert).path(base)
            key = TlsFile("tls.key", self.key).path(base) if self.key else None
            try:
                context.load_cert_chain(cert, key)
            except (ssl.SSLError, OSError, ValueError):
                raise ConfigurationError(
                    "tls.cert", f"{self.cert} (with its key) is not a readable client certificate"
                ) from None
        return context


class TlsFile(msgspec.Struct, frozen=True):
    """A file named by a setting of Tls (`where`), relative to the project folder."""

    where: str
    name: str

    def path(self, base: pathlib.Path) -> str:
        """The file's full path; ConfigurationError naming it when there is no such file."""
        path = base / self.name
        if not path.is_file():
            raise ConfigurationError(self.where, f"no such file: {self.name}")
        return str(path)
