"""Errors in the OpenAI API's shape: ``{"error": {"message", "type", "param", "code"}}``.

:class:`ApiError` carries an HTTP status and that object; :func:`error_response` writes it. The
messages name what was expected and what was found, and never hold a traceback or a secret.
Imports starlette's response type only.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    408: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "service_unavailable",
}


class ApiError(Exception):
    """An answer that is an error: its HTTP status and the OpenAI error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.headers = headers or {}
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        error = {
            "message": self.message,
            "type": TYPES.get(self.status, "invalid_request_error"),
            "param": self.param,
            "code": self.code,
        }
        return {"error": error, **self.extra}


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON answer of ``error`` (with its own headers, e.g. ``Retry-After``)."""
    both = {**error.headers, **(headers or {})}
    return JSONResponse(error.body(), status_code=error.status, headers=both or None)


def bad_request(message: str, param: str | None = None, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)
