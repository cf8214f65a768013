"""``governor serve --model-path gemma3-270m`` answers the official ``openai`` client.

The app is built from the command line's arguments (:func:`governor.cli.serve.build_app`) and
served on a loopback port; the model the flag names is the session's loaded one (the same
:func:`~governor.backends.local_model.local_backend` call, made once), so the test takes seconds.
"""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest
import yaml
from rich.console import Console

from governor.backends import local_worker
from governor.backends.hf import HFBackend
from governor.backends.local_model import LOCAL_MODEL
from governor.cli import build_parser
from governor.cli.serve import build_app
from governor.serve.local import serving

pytestmark = pytest.mark.model

FALLBACK = "Sorry, I have no answer."


def test_the_service_answers_the_openai_client_from_the_local_model(
    local_model: HFBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai = pytest.importorskip("openai")
    loaded: list[str] = []

    def load(spec: str) -> HFBackend:
        loaded.append(spec)
        return local_model

    monkeypatch.setattr(local_worker, "local_backend", load)
    policy = tmp_path / "local.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "upstream": {"temperature": 0, "max_tokens": 32, "system_prompt": "Be brief."},
                "observer": {"n_candidates": 1, "max_regenerations": 0, "time_budget_s": 60},
                "overlays": "none",
                "fallbacks": {"default": FALLBACK},
            }
        )
    )
    argv = ["serve", "--model-path", LOCAL_MODEL, "--policy", str(policy), "--store", "memory"]
    console = io.StringIO()
    app = build_app(build_parser().parse_args(argv), Console(file=console))
    assert loaded == [LOCAL_MODEL]
    assert "in front of hf:gemma3-270m in-process" in console.getvalue()
    try:
        with serving(app) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
            reply = client.chat.completions.create(
                model="gemma3-270m",
                messages=[{"role": "user", "content": "Hi! How are you today?"}],
                max_tokens=4,
                extra_headers={"X-Governor-Session": "model-test"},
            )
            ready = httpx.get(f"{base}/readyz").json()
    finally:
        app.state.service.guard.backend.close()
    text = reply.choices[0].message.content
    assert text and text.strip() and text != FALLBACK
    governor = reply.model_extra["governor"]  # type: ignore[index]
    assert governor["kind"] == "execute" and governor["llm"]["calls"] == 1
    assert governor["llm"]["tokens"] > 0
    assert ready == {"ready": True, "store": {"ok": True, "error": None},
                     "upstream": {"ok": True, "error": None}}  # fmt: skip
