"""OpenTelemetry spans for the runtime loop, when the application has the API installed.

governor uses only ``opentelemetry-api`` (the ``[otel]`` extra): a ``governor.step`` span per
observer step (attributes: the decision's kind, cause and regenerations, and its LLM calls and
tokens) with a child span per stage (``governor.propose``, ``governor.check``,
``governor.feedback``, ...; attributes: the stage's LLM calls, failed calls and tokens; a stage
that raises is recorded on its span). Which SDK, exporter and sampler to use is the application's
choice: with the API but no SDK's tracer provider set, and without the API installed, :func:`span`
costs a function call and opens no span. A provider named by the environment
(``OTEL_PYTHON_TRACER_PROVIDER``) counts when it is set before this module is imported. Imports the usage meter only.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from governor.usage import Usage

try:
    from opentelemetry import trace as _trace
except ImportError:  # the optional extra is absent
    _trace = None  # type: ignore[assignment]

NAME = "governor"


_NO_SPAN: AbstractContextManager[Any] = nullcontext(None)
_NO_SDK: tuple[type, ...] = ()
_NONE_SET = False
"""Whether "no provider set" can be read off the API's global (what ``get_tracer_provider``
reads) without its look into ``os.environ`` on every call: the environment names no provider
(``OTEL_PYTHON_TRACER_PROVIDER``, which OpenTelemetry's launchers set before the process
starts) when this module is imported, and the API keeps its global where it is read."""
if _trace is not None:
    _NO_SDK = (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)
    _NONE_SET = hasattr(_trace, "_TRACER_PROVIDER") and (
        "OTEL_PYTHON_TRACER_PROVIDER" not in os.environ
    )


def span(name: str) -> AbstractContextManager[Any]:
    """A span named ``governor.<name>`` made current for the block (``None`` without the API,
    or while no SDK's tracer provider is set: then a span would record nothing)."""
    if (
        _trace is None
        or (_NONE_SET and _trace._TRACER_PROVIDER is None)  # (no provider was set in code)
        or isinstance(_trace.get_tracer_provider(), _NO_SDK)
    ):
        return _NO_SPAN
    return _trace.get_tracer(NAME).start_as_current_span(f"{NAME}.{name}")


def record_usage(current: Any, usage: Usage) -> None:
    """Put ``usage`` on the span (LLM calls, failed calls, tokens)."""
    if current is None:
        return
    current.set_attribute("governor.llm.calls", usage.calls)
    current.set_attribute("governor.llm.failed", usage.failed)
    current.set_attribute("governor.llm.prompt_tokens", usage.prompt_tokens)
    current.set_attribute("governor.llm.completion_tokens", usage.completion_tokens)
