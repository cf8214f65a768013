"""The one exception tree of governor.

::

    GovernorError                  anything governor raises on purpose
    ├── ConfigError                bad configuration, flag, parameter or file
    │   └── LimitError             an input past a configured limit (it names the limit)
    ├── SpecError                  a constraint specification that cannot be used
    ├── EnvError                   an environment was driven outside its contract
    ├── GuardTimeout               a stage ran past its time budget
    └── BackendError               an LLM backend failed
        ├── BackendUnavailable     the endpoint could not be reached
        ├── BackendTimeout         the endpoint did not answer in time
        ├── BackendHTTPError       the endpoint answered with an HTTP error status
        └── BackendResponseError   the endpoint answered with something unusable

Vendor exceptions (httpx, transformers, ...) are mapped to these once, at the edge, with
``raise ... from exc``. Messages say what was expected and what was found.
"""

from __future__ import annotations


class GovernorError(Exception):
    """Base class of every error governor raises on purpose."""


class ConfigError(GovernorError):
    """A configuration value, flag, parameter or file is invalid."""


class LimitError(ConfigError):
    """An input is past a configured limit; ``limit`` names the setting, ``value`` its bound."""

    def __init__(self, message: str, limit: str, value: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value


class SpecError(GovernorError):
    """A constraint specification (overlay, formula, ...) cannot be used."""


class EnvError(GovernorError):
    """An environment was given an invalid action, state or option."""


class GuardTimeout(GovernorError):
    """A guarded stage (policy, constraint, fallback) ran past its time budget."""


class BackendError(GovernorError):
    """An LLM backend call failed."""


class BackendUnavailable(BackendError):
    """The backend could not be reached (connection refused, DNS, missing model path)."""


class BackendTimeout(BackendError):
    """The backend did not answer within its timeout."""


class BackendHTTPError(BackendError):
    """The backend answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status

    @property
    def retryable(self) -> bool:
        """Rate limits and server errors may pass; client errors will not."""
        return self.status == 429 or self.status >= 500


class BackendResponseError(BackendError):
    """The backend answered, but not with what the protocol promises."""


FOUND_LIMIT = 200
"""The most characters of a found value an error message shows."""


def shown(found: object) -> str:
    """``found`` as a message quotes it: its repr, cut to :data:`FOUND_LIMIT` characters so that
    a huge input is never echoed whole."""
    text = repr(found)
    if len(text) > FOUND_LIMIT:
        text = f"{text[: FOUND_LIMIT - 40]}... ({len(text):,} characters in all)"
    return text


def expected(what: str, found: object) -> str:
    """The house phrasing of an error message: what was expected, what was found
    (:func:`shown`)."""
    return f"expected {what}, found {shown(found)}"
