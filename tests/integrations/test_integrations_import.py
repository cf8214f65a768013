"""``import governor`` (and the guard and the service) imports no agent framework and no
integration; the runtime library never imports ``governor.integrations``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
FRAMEWORKS = ("mcp", "agents", "langchain", "langchain_core", "langgraph", "governor.integrations")
ABOVE = ("integrations", "cli")
"""The packages under ``src/governor`` that may import an integration."""


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


def test_the_runtime_never_imports_the_integrations() -> None:
    offenders = []
    for path in sorted((SRC / "governor").rglob("*.py")):
        if path.relative_to(SRC / "governor").parts[0] in ABOVE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.name}: {n}" for n in names if n.startswith("governor.integrations")
            ]
    assert offenders == []
