"""Services of `governor bench serve` run as processes of their own: ``governor serve --workers N``
(the command as users run it) and, with ``--compare nemo``, NVIDIA NeMo Guardrails' server, each
on a free loopback port in front of the same upstream stub; and the CPU time those processes
spent (:func:`tree_cpu_s`: a process and its children, read from ``/proc``).

The NeMo configuration (:data:`NEMO_CONFIG`, :data:`NEMO_RAILS`, :data:`NEMO_ACTIONS`) passes
the request through to the stub (``passthrough: true``: one model call, as governor makes) with
one output rail: a Python action, no model call, that admits the reply when it has at most 60
words and matches none of ten patterns (:data:`NEMO_PATTERNS`) -- ten deterministic rules per
reply, as governor's ``ltl`` set judges ten rules per step. NeMo runs from its own interpreter
(``--nemo-python``; by default ``.venv-nemo/bin/python`` as ``make nemo-venv`` creates it, else
this one when it has NeMo), as its dependencies would move the project's. Imports only the bench's workload and the runtime
helpers; the services are started as commands, never imported.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from governor.errors import ConfigError

START_S = 120.0
"""How long a service may take to answer its first request."""


def free_port() -> int:
    """A loopback port free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tree_cpu_s(pid: int) -> float | None:
    """User and system CPU seconds of ``pid`` and its live children (read from ``/proc``); None
    where ``/proc`` is not there."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    proc = Path("/proc")
    if not (proc / str(pid) / "stat").exists():
        return None
    total = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone since listed
        if entry.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / ticks


class Served:
    """A service started as ``argv`` (its output in ``log``), ready once ``GET ready_url``
    answers 200; stopped with SIGTERM (SIGKILL after 20 s) on exit."""

    def __init__(self, argv: list[str], base: str, ready_url: str, log: Path, **popen: Any):
        self.argv, self.base, self.ready_url, self.log = argv, base, ready_url, log
        self._popen = popen
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Served:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, **self._popen
            )
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(self.ready_url, timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace")[-2000:]
                self.__exit__(None, None, None)
                raise ConfigError(
                    f"bench serve: expected {self.argv[2:4]} to answer {self.ready_url} within"
                    f" {START_S:g} s, found it {'exited' if self.proc.poll() is not None else 'silent'}:\n{tail}"
                )
            time.sleep(0.2)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def cpu_s(self) -> float | None:
        """CPU seconds spent so far by the service's processes."""
        return None if self.proc is None else tree_cpu_s(self.proc.pid)


def governor_served(policy: dict[str, Any], folder: Path, name: str, workers: int) -> Served:
    """``governor serve --workers workers`` with ``policy`` (written as ``name``.yaml in
    ``folder``) and its sessions in the SQLite file ``name``.db there."""
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(policy))  # JSON is YAML
    port = free_port()
    argv = [
        sys.executable, "-m", "governor.cli", "serve", "--policy", str(path),
        "--store", f"sqlite:{folder / f'{name}.db'}", "--port", str(port),
        "--workers", str(workers),
    ]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    return Served(argv, base, f"{base}/healthz", folder / f"{name}.log")


NEMO_PATTERNS = (
    r"\bpassword\b",
    r"\bsecret\b",
    r"\btransfer (the )?funds\b",
    r"\bdelete (the )?file",
    r"\bsocial security\b",
    r"\bapi[_ ]key\b",
    r"\bwire (the )?money\b",
    r"\bcredit card\b",
    r"<script",
    r"\bsend (an )?email\b",
)
"""The ten patterns NeMo's output rail refuses a reply for."""

NEMO_CONFIG = """\
models:
  - type: main
    engine: openai
    model: stub
    parameters:
      base_url: {base_url}
      api_key: none
      max_retries: 0
passthrough: true
rails:
  output:
    flows:
      - check reply rules
"""

NEMO_RAILS = """\
define bot refuse to respond
  "Oh nice. How about you?"

define flow check reply rules
  $allowed = execute check_reply(text=$bot_message)
  if not $allowed
    bot refuse to respond
    stop
"""

NEMO_ACTIONS = """\
import re

from nemoguardrails.actions import action

RULES = [re.compile(p, re.IGNORECASE) for p in {patterns!r}]


@action(is_system_action=True)
async def check_reply(text: str = ""):
    return len(text.split()) <= 60 and not any(rule.search(text) for rule in RULES)
"""

NEMO_CONFIG_ID = "bench"


def nemo_python(given: str) -> str:
    """The interpreter NeMo Guardrails runs from: ``given``; by default ``.venv-nemo/bin/python``,
    else this one, whichever has ``nemoguardrails[server]``; a ConfigError naming
    ``make nemo-venv`` when none has it."""
    candidates = [given] if given else [str(Path(".venv-nemo") / "bin" / "python"), sys.executable]
    for python in candidates:
        probe = [python, "-c", "import fastapi, uvicorn, nemoguardrails.server.api"]
        try:
            if subprocess.run(probe, capture_output=True, timeout=120).returncode == 0:
                return python
        except (OSError, subprocess.TimeoutExpired):
            continue
    raise ConfigError(
        "bench serve --compare nemo: expected an interpreter with nemoguardrails[server]"
        f" (make nemo-venv creates .venv-nemo; or --nemo-python PATH), found none at"
        f" {' or '.join(candidates)}"
    )


def nemo_served(python: str, folder: Path, upstream_url: str) -> Served:
    """NeMo Guardrails' server with the configuration above, in front of ``upstream_url``."""
    config = folder / "nemo" / NEMO_CONFIG_ID
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yml").write_text(NEMO_CONFIG.format(base_url=upstream_url))
    (config / "rails.co").write_text(NEMO_RAILS)
    (config / "actions.py").write_text(NEMO_ACTIONS.format(patterns=list(NEMO_PATTERNS)))
    port = free_port()
    argv = [
        python, "-m", "nemoguardrails", "server", "--config", str(config.parent),
        "--port", str(port), "--disable-chat-ui", "--default-config-id", NEMO_CONFIG_ID,
    ]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "NEMO_GUARDRAILS_DISABLE_CHAT_UI": "true"}
    return Served(argv, base, f"{base}/v1/rails/configs", folder / "nemo.log", env=env, cwd=folder)
