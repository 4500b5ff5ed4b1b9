"""What can go wrong in the engine, as exceptions a caller can catch: every one derives from
ConvyError, so `except ConvyError` holds them all. Each is defined in the module that raises it (the
module named first on its line below); two are ValueErrors too, as readers of run folders catch them so.

    ConvyError                    errors: the base of every exception the engine raises on purpose
     ├── ConfigurationError       errors: a file or a setting to fix, found before anything is played (exit 2)
     ├── AgentFailure             play.agent: the agent failed a turn (an error status, a timeout, an answer
     │                            that cannot be read); the attempt is Failed
     ├── SessionNotEnded          play.agent: ending the agent's own session failed on closing; only a warning
     ├── Busy                     play.busy: a service refused a request unprocessed (429, 503), or a model
     │                            failed in a way worth asking again; the request may be sent again
     ├── GaveUp                   play.busy: a participant's patience ran out while its service stayed busy
     ├── ModelFailure             play.model: the simulated user's or the judge's model failed, stayed busy or
     │                            answered what cannot be used; the attempt has no verdict
     ├── PathMissing              play.template: nothing is at an agent file's dotted path in the JSON
     ├── Unread                   play.version: agent-version-url answered no build
     ├── Resend                   play.wire.dialect: the dialect learned how the agent must be spoken to;
     │                            the turn is sent again, once
     ├── Pending                  play.wire.dialect: the answer is a task still at work; it is asked
     │                            after until done or the turn's timeout
     ├── TokenRefused             play.wire.oauth: the OAuth2 token endpoint gave no token
     ├── Unreadable (ValueError)  store.journal: run.json cannot be read (truncated, not JSON, not a run)
     ├── RunInUse                 store.lock: another process is playing the run folder (it holds run.lock)
     ├── NewerFormat              store.journal: the run folder was written by a newer convy
     ├── ReceiverRefused          store.otlp: the OpenTelemetry receiver did not take a run's spans
     ├── RunsDiffer (ValueError)  compare.comparison: the two runs cannot be compared (different agents)
     ├── Interrupted              conduct.ready: a signal or a cancellation stopped the run; its folder is
     │                            kept for `convy resume`
     └── ScenarioFailed           plugin.items: a pytest item's scenario did not hold in the run; its
                                  report's text

The one deliberate exception to the rule is no error but a signal of control flow, kept out of reach of
the `except Exception` that records an attempt's unexpected error:

    BaseException
     └── Halted                   play.bench: fail-fast stopped the run before a conversation opened; a
                                  BaseException, so it passes through every attempt's `except Exception`
"""

from __future__ import annotations


class ConvyError(Exception):
    """The base of every exception the engine raises on purpose."""


class ConfigurationError(ConvyError):
    """A bad project, setting or file, found before any request. `where` names the file and line
    (`scenarios/refund.yaml:7`) or the setting (`model-url`); the message never holds a value that
    may be secret."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message
