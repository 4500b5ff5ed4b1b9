"""OAuth2 client credentials (RFC 6749 §4.4): one access token for the whole run, shared by every
conversation — fetched before the first attempt (a refusal is a ConfigurationError quoting the token
endpoint, exit 2 before any agent request), renewed before `expires_in` runs out, and renewed once
after the agent refuses it (401)."""

from __future__ import annotations

import asyncio
import ssl

import httpx
import msgspec

from convy.errors import ConfigurationError, ConvyError
from convy.play.agent import AgentFailure
from convy.play.busy import Clock, WallClock
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.reading import MOST_BYTES, Limited
from convy.play.wire.spec import OAuth2, Shown


class Granted(msgspec.Struct, frozen=True, kw_only=True):
    """A token endpoint's answer: the token and how many seconds it lasts (0: not said)."""

    access_token: str
    expires_in: float = 0.0
    token_type: str = "Bearer"  # noqa: S105 (the kind of token, not a password)


class TokenRefused(ConvyError):
    """The token endpoint gave no token: `message` is its own words (secrets masked)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AccessToken:
    """The run's access token for `oauth`, asked with the agent's TLS (`verify`) within `timeout`
    seconds, on `clock`. A token is renewed when less than a tenth of its life (at most 60 s) is
    left, or when the agent refused it."""

    def __init__(
        self, oauth: OAuth2, verify: ssl.SSLContext | bool, timeout: float, clock: Clock | None = None
    ) -> None:
        self._oauth = oauth
        self._verify = verify
        self._timeout = timeout
        self._clock = clock or WallClock()
        self._token = ""
        self._renew_at = 0.0
        self._lock = asyncio.Lock()
        self._seen: list[str] = []
        self._basic = False

    @property
    def shown(self) -> str:
        return Shown(self._oauth.token_url).text

    def secrets(self) -> tuple[str, ...]:
        """The client secret and every token handed out: never shown."""
        return (self._oauth.client_secret, *self._seen)

    async def first(self) -> str:
        """The first token, before any agent request: ConfigurationError (exit 2) with the token
        endpoint's own message when it gives none."""
        try:
            return await self.token()
        except TokenRefused as refused:
            raise ConfigurationError(
                "auth.oauth2", f"the token endpoint {self.shown} gave no token: {refused.message}"
            ) from None

    async def token(self) -> str:
        """The current token, renewed first when it is about to run out."""
        async with self._lock:
            if not self._token or self._clock.now() >= self._renew_at:
                await self._fetch()
            return self._token

    async def renewed(self, refused: str) -> str:
        """A new token after the agent refused `refused` (401): asked once however many
        conversations were refused the same token; AgentFailure when the endpoint refuses."""
        async with self._lock:
            if self._token == refused:
                try:
                    await self._fetch()
                except TokenRefused as error:
                    raise AgentFailure(
                        "auth_failed",
                        f"the token endpoint {self.shown} gave no token: {error.message}",
                        message=error.message,
                    ) from None
            return self._token

    async def _fetch(self) -> None:
        """A new token. The client authenticates in the form body (`client_secret_post`); when the
        endpoint refuses that as a client authentication (400 or 401 `invalid_client`, or a 401),
        it is asked once more with HTTP Basic (`client_secret_basic`, which RFC 6749 §2.3.1 makes
        every server accept), and the way that worked is kept for the run's renewals."""
        started = self._clock.now()
        masked = Masked(self.secrets())
        status, content = await self._asked(basic=self._basic)
        if not self._basic and Unauthenticated(status, content).refused():
            retried, again = await self._asked(basic=True)
            if not 200 <= retried < 300:
                first = f"HTTP {status}: {OAuthError(content, masked).message()}"
                raise TokenRefused(
                    f"{first}; asked with HTTP Basic: HTTP {retried}: {OAuthError(again, masked).message()}"
                )
            self._basic = True
            status, content = retried, again
        if not 200 <= status < 300:
            raise TokenRefused(f"HTTP {status}: {OAuthError(content, masked).message()}")
        try:
            granted = msgspec.json.decode(content, type=Granted)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise TokenRefused("its answer holds no access_token") from None
        if not granted.access_token:
            raise TokenRefused("its answer holds an empty access_token")
        self._token = granted.access_token
        self._seen.append(granted.access_token)
        life = granted.expires_in if granted.expires_in > 0 else 3600.0
        self._renew_at = started + life - min(60.0, life / 10)

    async def _asked(self, basic: bool) -> tuple[int, bytes]:
        """The token endpoint's status and body, the client's credentials in the form or (`basic`)
        in an Authorization header."""
        form = {"grant_type": "client_credentials"}
        if not basic:
            form.update(client_id=self._oauth.client_id, client_secret=self._oauth.client_secret)
        if self._oauth.scope:
            form["scope"] = self._oauth.scope
        if self._oauth.audience:
            form["audience"] = self._oauth.audience
        credentials = httpx.BasicAuth(self._oauth.client_id, self._oauth.client_secret) if basic else None
        try:
            async with (
                httpx.AsyncClient(
                    timeout=httpx.Timeout(self._timeout), verify=self._verify, follow_redirects=False
                ) as client,
                client.stream(
                    "POST",
                    self._oauth.token_url,
                    data=form,
                    headers={"Accept": "application/json"},
                    auth=credentials,
                ) as response,
            ):
                return response.status_code, await Limited(MOST_BYTES).read(response) or b""
        except (httpx.HTTPError, ssl.SSLError, OSError) as error:
            raise TokenRefused(f"no answer ({type(error).__name__})") from None


class Unauthenticated(msgspec.Struct, frozen=True):
    """A token endpoint's answer that refused how the client authenticated (RFC 6749 §5.2)."""

    status: int
    content: bytes

    def refused(self) -> bool:
        if self.status == 401:
            return True
        if self.status != 400:
            return False
        try:
            data = msgspec.json.decode(self.content)
        except msgspec.DecodeError:
            return False
        return isinstance(data, dict) and data.get("error") == "invalid_client"


class OAuthError(msgspec.Struct, frozen=True):
    """A token endpoint's error answer: `error: error_description` (RFC 6749 §5.2), else as any
    service's error body."""

    content: bytes
    masked: Masked

    def message(self) -> str:
        try:
            data = msgspec.json.decode(self.content)
        except msgspec.DecodeError:
            data = None
        match data:
            case {"error": str(code), "error_description": str(description)} if description.strip():
                said = f"{code}: {description}"
                return ErrorBody(msgspec.json.encode({"message": said}), self.masked).message()
            case _:
                return ErrorBody(self.content, self.masked).message()
