"""Fixtures of the engine's tests: the LiteLLM proxy, started once for every test that uses it
(it takes seconds to start), the agent frameworks' own servers, each started once, Arize Phoenix's
server, and a local CA with the certificates it signed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import pytest

from tests.servers.litellm_proxy import LiteLLMProxy
from tests.servers.ui_servers import UiServer
from tests.support.certificates import Certificates
from tests.support.phoenix import phoenix  # noqa: F401 (Arize Phoenix's server, a fixture)


@pytest.fixture(scope="session")
def litellm_proxy() -> Iterator[LiteLLMProxy]:
    with LiteLLMProxy() as proxy:
        yield proxy


@pytest.fixture(scope="session")
def pydantic_ai_server() -> Iterator[UiServer]:
    """pydantic-ai's AG-UI and Vercel AI adapters (`/ag-ui`, `/chat`), started once."""
    with UiServer("pydantic-ai") as server:
        yield server


@pytest.fixture(scope="session")
def agno_server() -> Iterator[UiServer]:
    """agno AgentOS with its AG-UI interface (`/agui`), started once."""
    with UiServer("agno") as server:
        yield server


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A local CA, a server certificate for 127.0.0.1 and a client certificate it signed."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make certificates")
    folder = tmp_path_factory.mktemp("tls")

    def openssl(command: str, *args: str) -> None:
        subprocess.run(["openssl", *command.split(), *args], cwd=folder, check=True, capture_output=True)

    key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    openssl(
        f"req -x509 {key} -keyout ca.key -out ca.pem -days 2",
        "-subj",
        "/CN=convy test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    for name, usage in (("server", "serverAuth"), ("client", "clientAuth")):
        openssl(f"req {key} -keyout {name}.key -out {name}.csr", "-subj", f"/CN={name}")
        (folder / f"{name}.ext").write_text(
            f"subjectAltName=IP:127.0.0.1\nextendedKeyUsage={usage}\nbasicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
        )
        openssl(
            f"x509 -req -in {name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out {name}.pem -days 2",
            "-extfile",
            f"{name}.ext",
        )
    return Certificates(folder)
