"""The `governor` command line.

Each command module adds its parsers with ``set_defaults(handler=...)``; a handler takes the parsed
arguments and a console and returns the exit status. Every error the user can cause ends in one
line on stderr naming what was expected, and exit status 2; nothing reaches the user as a
traceback. The CLI sits on top: it may import the worlds, the papers' reproductions
(:mod:`governor.papers`), the runtime benchmarks (:mod:`governor.bench`) and the runtime library;
nothing imports it.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from governor import __version__
from governor.config import check_range
from governor.errors import ConfigError, GovernorError


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _demo(args: argparse.Namespace, console: Console) -> int:
    from governor.papers.demo import run_demo

    check_range("train_steps", args.train_steps, 1, 100_000_000)
    check_range("episodes", args.episodes, 1, 1_000_000)
    check_range("seed", args.seed, 0, 2**32 - 1)
    index = run_demo(
        args.out,
        episodes=args.episodes,
        seed=args.seed,
        train_steps=args.train_steps,
        console=console,
    )
    console.print(f"report written to {index.parent}/ (open {index})")
    console.print(f"inspect a trajectory: governor trace show {index.parent / 'trace.jsonl'}")
    return 0


def _trace_show(args: argparse.Namespace, console: Console) -> int:
    from governor.trace import render_trace
    from governor.trace.read import TornRecordWarning

    if args.store is not None:
        from governor.cli.stored import stored_records
        from governor.trace.render import render_records

        if args.file is not None:
            raise ConfigError(
                f"trace show: expected a trace file or --store, found both ({args.file})"
            )
        records, source = stored_records(args.store, args.session)
        episode = args.episode or args.session
        render_records(records, {}, source, episode=episode, console=console, verbose=args.verbose)
        return 0
    if args.session is not None:
        raise ConfigError("--session: expected --store beside it, found none")
    if args.file is None:
        raise ConfigError("trace show: expected a trace file or --store, found neither")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornRecordWarning)
        render_trace(args.file, episode=args.episode, console=console, verbose=args.verbose)
    for warning in caught:
        console.print(f"warning: {warning.message}", style="yellow", markup=False, soft_wrap=True)
    return 0


def build_parser() -> Parser:
    from governor.bench import feature_speed, ltl_speed, plain_http_cpu, serve_limits, store_cycle
    from governor.bench.service import latency as serve_bench
    from governor.cli.conversation import (
        add_audit_parser,
        add_calibrate_parser,
        add_chat_parser,
    )
    from governor.cli.gateway import add_mcp_parser
    from governor.cli.ltl import add_ltl_parser
    from governor.cli.model import add_model_parser
    from governor.cli.policy import add_policy_parser
    from governor.cli.safety_value import add_eval_parser, add_train_parser
    from governor.cli.serve import add_serve_parser
    from governor.papers import agentdojo_bench, ltl_translate, reguard_report
    from governor.papers.models import sweep as models_bench
    from governor.worlds.driving import bench as driving
    from governor.worlds.household import bench as safety_chip
    from governor.worlds.scenarios import bench as supervision
    from governor.worlds.smalltalk import bench as smalltalk
    from governor.worlds.smalltalk import embed_bench

    parser = Parser(prog="governor", description="Runtime guardrails for foundation-model agents.")
    parser.add_argument("-V", "--version", action="version", version=f"governor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    demo = sub.add_parser("demo", help="run the offline demo and write a report folder")
    demo.add_argument("--out", type=Path, default=Path("governor-report"), help="report folder")
    demo.add_argument("--episodes", type=int, default=100, help="episodes per policy and guard")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument(
        "--train-steps",
        type=int,
        default=10_000,
        help="gradient steps of the learned filter's training (default: %(default)s, about a"
        " minute here; a step budget makes identical runs identical)",
    )
    demo.set_defaults(handler=_demo)

    bench = sub.add_parser("bench", help="run a benchmark").add_subparsers(
        dest="bench", required=True, parser_class=Parser
    )
    driving.add_parser(bench)
    smalltalk.add_parser(bench)
    safety_chip.add_parser(bench)
    ltl_speed.add_parser(bench)
    embed_bench.add_parser(bench)
    ltl_translate.add_parser(bench)
    reguard_report.add_parser(bench)
    serve_bench.add_parser(bench)
    supervision.add_parser(bench)
    store_cycle.add_parser(bench)
    plain_http_cpu.add_parser(bench)
    feature_speed.add_parser(bench)
    serve_limits.add_parser(bench)
    models_bench.add_parser(bench)
    agentdojo_bench.add_parser(bench)

    trace = sub.add_parser("trace", help="inspect decision traces").add_subparsers(
        dest="trace", required=True, parser_class=Parser
    )
    show = trace.add_parser(
        "show", help="render one trajectory of a trace file or of a session store"
    )
    show.add_argument("file", type=Path, nargs="?", help="a trace file (or give --store)")
    show.add_argument(
        "--store",
        metavar="sqlite:PATH|postgres:DSN",
        help="read the decision records of a session store (governor serve's) instead",
    )
    show.add_argument(
        "--session", help="with --store: the stored session id (default: every session)"
    )
    show.add_argument("--episode", help="episode id (default: the first)")
    show.add_argument("--verbose", action="store_true", help="list every attempt and candidate")
    show.set_defaults(handler=_trace_show)
    add_ltl_parser(sub)
    add_policy_parser(sub)
    add_chat_parser(sub)
    add_audit_parser(sub)
    add_calibrate_parser(sub)
    add_train_parser(sub)
    add_eval_parser(sub)
    add_serve_parser(sub)
    add_mcp_parser(sub)
    add_model_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["-V"]):  # answered before the command modules are imported
        print(f"governor {__version__}")
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    # Wide enough for the benchmark tables when the output goes to a file or a pipe.
    # No emoji codes: ":m:" in a model name stays as written.
    console = Console(width=None if sys.stdout.isatty() else 120, emoji=False)
    try:
        return int(args.handler(args, console))
    except GovernorError as exc:
        print(f"governor: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("governor: interrupted", file=sys.stderr)
        return 130
