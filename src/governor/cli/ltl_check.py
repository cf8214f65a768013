"""``governor ltl check``: run a monitor over a JSON trace.

The trace is a list of steps, each a list of true propositions; prints
``{"steps": [...], "final": ...}`` and exits with status 1 when the trace violates the formula.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.cli.ltl_batch import print_json
from governor.errors import ConfigError, SpecError, expected
from governor.ltl.monitor import Monitor, MonitorVerdict
from governor.ltl.parser import canonical_label, parse, parse_prefix


def add_check_parser(sub: Any) -> None:
    """Add ``check`` to the ``ltl`` command group."""
    ck = sub.add_parser("check", help="monitor a trace; exit status 1 when it is violated")
    ck.add_argument("--formula", required=True, help="the formula (infix unless --prefix)")
    ck.add_argument("--prefix", action="store_true", help="the formula is in prefix notation")
    ck.add_argument(
        "--trace", type=Path, required=True, help="JSON list of steps, each a list of propositions"
    )
    ck.set_defaults(handler=check_command)


def read_trace(path: Path) -> list[frozenset[str]]:
    """A JSON trace: a non-empty list of steps, each a list of proposition strings."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc
    what = "a non-empty JSON list of steps, each a list of proposition strings"
    if not isinstance(data, list) or not data:
        raise ConfigError(f"{path}: {expected(what, data)}")
    out = []
    for i, step in enumerate(data):
        if not isinstance(step, list) or not all(isinstance(x, str) for x in step):
            raise ConfigError(
                f"{path}: step {i}: {expected('a list of proposition strings', step)}"
            )
        try:
            out.append(frozenset(canonical_label(x) for x in step))
        except SpecError as exc:  # one line: the parser's caret picture is not needed here
            raise SpecError(f"{path}: step {i}: {str(exc).splitlines()[0]}") from None
    return out


def check_command(args: argparse.Namespace, console: Console) -> int:
    """Monitor the trace; print each step's verdict and the final one as JSON."""
    formula = parse_prefix(args.formula) if args.prefix else parse(args.formula)
    trace = read_trace(args.trace)
    monitor = Monitor(formula, "check")
    state = monitor.initial
    steps = []
    for labels in trace:
        state = monitor.step(state, labels)
        steps.append(state.verdict.value)
    ok = Monitor.final_verdict(state) is MonitorVerdict.OK
    print_json(console, {"steps": steps, "final": "satisfied" if ok else "violated"})
    return 0 if ok else 1
