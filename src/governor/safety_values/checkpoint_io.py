"""Atomic checkpoint files: write beside the target, then swap it in with ``os.replace``.

An interrupted write leaves the previous file (or folder) intact; the temporary sibling is named
``.NAME.PID.tmp``, so concurrent writers do not share one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any


def plain(data: Any) -> Any:
    """``data`` as JSON would read it back: tuples become lists, keys strings."""
    return json.loads(json.dumps(data))


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Let ``write`` fill a temporary sibling of ``path``, then replace ``path`` by it."""
    tmp = _tmp(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON (the meta.json beside a checkpoint)."""
    atomic_write_text(path, json.dumps(data, indent=2))


def atomic_torch_save(obj: Any, path: Path) -> None:
    import torch

    atomic_write(path, lambda tmp: torch.save(obj, tmp))


def atomic_write_dir(path: Path, write: Callable[[Path], object]) -> None:
    """Let ``write`` fill a temporary sibling folder, then swap it in for the folder ``path``.

    The previous folder is moved aside first (``os.replace`` cannot replace a non-empty folder)
    and removed once the new one is in place.
    """
    tmp, old = _tmp(path), path.with_name(f".{path.name}.old")
    shutil.rmtree(tmp, ignore_errors=True)
    write(tmp)
    if path.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)
