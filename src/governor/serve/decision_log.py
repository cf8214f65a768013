"""The structured decision log: one JSON line per guarded decision, on logger ``governor.decisions``.

Each line is a JSON object: ``ts`` (Unix seconds), ``policy`` (the served policy's name),
``session`` (the stored session id: the policy's namespace and the owning key's prefix included,
what the admin routes name), ``user`` (the request's end-user id, or null), ``endpoint``
(``chat`` or ``checks``), ``kind`` (the decision's kind; for a check ``admissible`` or
``refused``), ``refused`` (the names of the rules that refused a candidate, sorted),
``regenerations``, ``latency_ms`` and ``model_calls`` (upstream calls the decision made). Text
the client or a model wrote never appears (only names from the policy file, the ids and numbers).
Nothing is built when the logger is not enabled for INFO. :func:`configure` points it at stderr
(``-``), a file, or nowhere (``off``), as ``governor serve --decision-log`` does. Imports the
error tree and the service's JSON writer.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from governor.errors import ConfigError, expected
from governor.serve.replies import json_bytes

LOGGER = "governor.decisions"
log = logging.getLogger(LOGGER)


def refused_rules(summary: Mapping[str, Any]) -> list[str]:
    """The names of the constraints that refused a candidate in a decision (or a check)."""
    names = {
        str(v.get("constraint"))
        for key in ("rejected", "verdicts")
        for v in summary.get(key) or ()
        # (dict first: a plain dict is what a summary holds, and is told apart without the
        # Mapping ABC's slower check)
        if isinstance(v, (dict, Mapping)) and v.get("admissible") is False
    }
    return sorted(names)


def log_decision(
    policy: str,
    session: str,
    user: str | None,
    endpoint: str,
    summary: Mapping[str, Any],
    seconds: float,
    refused: list[str] | None = None,
) -> None:
    """Write the decision's line (nothing when the logger is off for INFO)."""
    if not log.isEnabledFor(logging.INFO):
        return
    llm = summary.get("llm") or {}
    line = {
        "ts": round(time.time(), 3),
        "policy": policy,
        "session": session,
        "user": user,
        "endpoint": endpoint,
        "kind": summary.get("kind"),
        "refused": refused_rules(summary) if refused is None else refused,
        "regenerations": summary.get("regenerations", 0),
        "latency_ms": round(1000.0 * seconds, 3),
        "model_calls": int(llm.get("calls", 0)),
    }
    log.info("%s", json_bytes(line).decode("utf-8"))


def configure(target: str) -> Callable[[], None]:
    """Send the decision log to ``target``: ``-`` (stderr), ``off`` (nowhere) or a file path
    (appended); the function that puts the logger back as it was."""
    if not isinstance(target, str) or not target:
        raise ConfigError(f"--decision-log: {expected('-, off or a file path', target)}")
    before = (list(log.handlers), log.propagate, log.level)
    handler: logging.Handler | None = None
    if target != "off":
        try:
            handler = (
                logging.StreamHandler(sys.stderr) if target == "-" else logging.FileHandler(target)
            )
        except OSError as exc:
            raise ConfigError(f"--decision-log: expected a writable file, found {exc}") from None
        handler.setFormatter(logging.Formatter("%(message)s"))
    for h in before[0]:
        log.removeHandler(h)
    log.propagate = False
    if handler is None:
        log.setLevel(logging.CRITICAL + 1)
    else:
        log.addHandler(handler)
        log.setLevel(logging.INFO)

    def restore() -> None:
        if handler is not None:
            log.removeHandler(handler)
            handler.close()
        for h in before[0]:
            log.addHandler(h)
        log.propagate, log.level = before[1], before[2]

    return restore
