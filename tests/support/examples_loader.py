"""Load a runnable example from ``examples/`` as a module, so a test drives what a user runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(filename: str) -> ModuleType:
    """The example ``examples/<filename>`` imported as a module of its own name."""
    path = EXAMPLES / filename
    name = f"{path.stem}_example"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"{path}: not a Python file"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
