"""OpenTelemetry spans for the runtime loop, when the application has the API installed.

governor uses only ``opentelemetry-api`` (the ``[otel]`` extra): a ``governor.step`` span per
observer step (attributes: the decision's kind, cause and regenerations, and its LLM calls and
tokens) with a child span per stage (``governor.propose``, ``governor.check``,
``governor.feedback``, ...; attributes: the stage's LLM calls, failed calls and tokens; a stage
that raises is recorded on its span). Which SDK, exporter and sampler to use is the application's
choice: with the API but no SDK configured, spans are no-ops; without the API installed, nothing
is imported and :func:`span` costs a function call. Imports the usage meter only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from governor.usage import Usage

try:
    from opentelemetry import trace as _trace
except ImportError:  # the optional extra is absent
    _trace = None  # type: ignore[assignment]

NAME = "governor"


@contextmanager
def span(name: str) -> Iterator[Any]:
    """A span named ``governor.<name>`` made current for the block (``None`` without the API)."""
    if _trace is None:
        yield None
        return
    with _trace.get_tracer(NAME).start_as_current_span(f"{NAME}.{name}") as current:
        yield current


def record_usage(current: Any, usage: Usage) -> None:
    """Put ``usage`` on the span (LLM calls, failed calls, tokens)."""
    if current is None:
        return
    current.set_attribute("governor.llm.calls", usage.calls)
    current.set_attribute("governor.llm.failed", usage.failed)
    current.set_attribute("governor.llm.prompt_tokens", usage.prompt_tokens)
    current.set_attribute("governor.llm.completion_tokens", usage.completion_tokens)
