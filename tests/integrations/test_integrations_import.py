"""``import governor`` (and the guard and the service) imports no agent framework and no
integration (the layers, the runtime never importing ``governor.integrations`` among them, are
``tests/test_layout.py``'s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
FRAMEWORKS = (
    "mcp",
    "agents",
    "agentdojo",
    "langchain",
    "langchain_core",
    "langgraph",
    "governor.integrations",
)


def test_importing_governor_imports_no_framework() -> None:
    probe = (
        "import sys, governor, governor.guard, governor.serve\n"
        f"print(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
