"""Command-line flags from configuration: one ``--flag`` per dataclass field, with its help and
default, and the LLM endpoint flags every command that talks to a model shares.

Imports the config only.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from typing import Any, Literal, TypeVar

from governor.config import BackendConfig, check_types

C = TypeVar("C")


def add_dataclass_args(parser: argparse.ArgumentParser, cls: type[Any]) -> None:
    """One ``--flag`` per field of ``cls``; the field's help metadata becomes the flag's help."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        kind = hints[f.name]
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else None
        text = f.metadata.get("help", "")
        if "default" not in text and default is not None:  # said once, and only when there is one
            text = f"{text} (default: {default})"
        choices = _literal_choices(kind)
        if kind is bool:
            parser.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=text,
            )
        elif choices:
            parser.add_argument(flag, choices=choices, default=None, help=text)
        elif _scalar(kind) in (int, float, str):
            parser.add_argument(
                flag,
                type=_scalar(kind),
                default=None,
                metavar=_scalar(kind).__name__.upper(),
                help=text,
            )


def dataclass_from_args(cls: type[C], args: argparse.Namespace, **base: Any) -> C:
    """The dataclass with every flag the user gave applied over ``base`` and the defaults."""
    values = dict(base)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = getattr(args, f.name, None)
        if value is not None:
            values[f.name] = value
    made = cls(**values)
    check_types(made)
    return made


def _literal_choices(kind: Any) -> list[str] | None:
    if typing.get_origin(kind) is Literal:
        return [str(v) for v in typing.get_args(kind)]
    return None


def _scalar(kind: Any) -> Any:
    """``int`` for ``int | None`` and the like; the type itself otherwise."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return args[0] if len(args) == 1 else None
    return kind


# What `add_subparsers` returns; command modules add their parsers to one of these.
Subcommands = argparse._SubParsersAction


def add_backend_args(parser: argparse.ArgumentParser) -> None:
    """The LLM endpoint flags every command that talks to a model shares."""
    group = parser.add_argument_group("LLM endpoint (flags override GOVERNOR_* variables)")
    group.add_argument("--base-url", help="OpenAI-compatible base URL (GOVERNOR_BASE_URL)")
    group.add_argument("--model", help="model name (GOVERNOR_MODEL)")
    group.add_argument("--api-key", help="API key (GOVERNOR_API_KEY)")
    group.add_argument("--timeout", type=float, help="seconds per HTTP request (default 60)")
    if "--model-path" not in parser._option_string_actions:  # a command's own flag wins
        group.add_argument(
            "--model-path",
            dest="backend_model_path",
            metavar="PATH",
            help="run a local model in-process instead: a transformers folder, or gemma3-270m"
            " (fetched by `governor model fetch`) (GOVERNOR_MODEL_PATH)",
        )


def backend_config_from_args(args: argparse.Namespace) -> BackendConfig:
    """The endpoint from the environment, overridden by the flags of :func:`add_backend_args`."""
    return BackendConfig.from_env(
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        timeout_s=args.timeout,
        model_path=getattr(args, "backend_model_path", None),
    )
