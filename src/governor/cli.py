"""The `governor` command line.

Every error the user can cause ends in one line on stderr naming what was expected, and exit
status 2; nothing reaches the user as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from governor import __version__
from governor.config import BackendConfig, add_dataclass_args, dataclass_from_args
from governor.errors import GovernorError


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _backend_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM endpoint (flags override GOVERNOR_* variables)")
    group.add_argument("--base-url", help="OpenAI-compatible base URL (GOVERNOR_BASE_URL)")
    group.add_argument("--model", help="model name (GOVERNOR_MODEL)")
    group.add_argument("--api-key", help="API key (GOVERNOR_API_KEY)")
    group.add_argument("--timeout", type=float, help="seconds per HTTP request (default 60)")


def _backend_config(args: argparse.Namespace) -> BackendConfig:
    return BackendConfig.from_env(
        base_url=args.base_url, model=args.model, api_key=args.api_key, timeout_s=args.timeout
    )


def build_parser() -> Parser:
    parser = Parser(prog="governor", description="Runtime guardrails for foundation-model agents.")
    parser.add_argument("--version", action="version", version=f"governor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    demo = sub.add_parser("demo", help="run the offline demo and write a report folder")
    demo.add_argument("--out", type=Path, default=Path("governor-report"), help="report folder")
    demo.add_argument("--episodes", type=int, default=100, help="episodes per policy and guard")
    demo.add_argument("--seed", type=int, default=0)

    bench = sub.add_parser("bench", help="run a benchmark").add_subparsers(
        dest="bench", required=True, parser_class=Parser
    )
    from governor.bench.driving import DrivingBenchConfig

    drive = bench.add_parser(
        "driving", help="driving under no guard, a myopic stop, the exact filter"
    )
    add_dataclass_args(drive, DrivingBenchConfig)
    drive.add_argument("--json", type=Path, help="write the results here")
    drive.add_argument("--plot", type=Path, help="write the safe-set plot (PNG) here")
    drive.add_argument("--trace", type=Path, help="record every decision (.jsonl or .sqlite)")
    _backend_flags(drive)

    trace = sub.add_parser("trace", help="inspect decision traces").add_subparsers(
        dest="trace", required=True, parser_class=Parser
    )
    show = trace.add_parser("show", help="render one trajectory of a trace file")
    show.add_argument("file", type=Path)
    show.add_argument("--episode", help="episode id (default: the first)")
    show.add_argument("--verbose", action="store_true", help="list every attempt and candidate")
    return parser


def run(args: argparse.Namespace, console: Console) -> int:
    if args.command == "demo":
        from governor.bench.demo import run_demo

        index = run_demo(args.out, episodes=args.episodes, seed=args.seed, console=console)
        console.print(f"report written to {index.parent}/ (open {index})")
        console.print(f"inspect a trajectory: governor trace show {index.parent / 'trace.jsonl'}")
        return 0
    if args.command == "bench":
        from governor.bench import driving
        from governor.bench.demo import write_driving
        from governor.bench.report import print_table

        cfg = dataclass_from_args(driving.DrivingBenchConfig, args)
        result = driving.run(cfg, _backend_config(args), trace_path=args.trace)
        print_table(console, "Driving", list(driving.table_lines(result)))
        mon = result["monitor"]
        if mon:
            console.print(
                f"monitor: {mon['states']} states, agreement {mon['agreement']:.2%}, "
                f"false-safe {mon['false_safe_rate']:.2%} (margin {result['margin']:.3f})"
            )
        console.print(
            f"grid value: {result['grid_seconds']:.1f} s"
            f"{' (cache)' if result['grid_cached'] else ''}; filter decision "
            f"{result['filter_decision_us_p50']:.1f} µs median"
        )
        write_driving(result, args.json, args.plot)
        return 0
    if args.command == "trace":
        from governor.trace import render_trace

        render_trace(args.file, episode=args.episode, console=console, verbose=args.verbose)
        return 0
    raise AssertionError(f"unhandled command {args.command}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Wide enough for the benchmark tables when the output goes to a file or a pipe.
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        return run(args, console)
    except GovernorError as exc:
        print(f"governor: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("governor: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
