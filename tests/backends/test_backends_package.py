"""The backends package: the factory, and the Hugging Face extra being optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from governor.backends import HFBackend, OpenAIBackend, backend_from_config
from governor.config import BackendConfig
from governor.errors import ConfigError


def test_backend_from_config() -> None:
    with pytest.raises(ConfigError, match="no LLM endpoint configured; set GOVERNOR_BASE_URL"):
        backend_from_config(BackendConfig(model="m"))
    with pytest.raises(ConfigError, match="expected a config with base_url and model"):
        OpenAIBackend(BackendConfig(base_url="http://localhost:1/v1"))
    with backend_from_config(BackendConfig("http://localhost:1/v1/", "m")) as backend:
        assert isinstance(backend, OpenAIBackend)
        assert backend.base_url == "http://localhost:1/v1" and backend.name == "openai:m"


def test_the_package_imports_without_torch_or_transformers() -> None:
    code = (
        "import sys\n"
        "sys.modules['torch'] = sys.modules['transformers'] = None\n"
        "import governor.backends\n"  # fails if anything imports torch at module level
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_missing_hf_extra_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(
        ConfigError, match=r"needs torch and transformers .*pip install -e '\.\[hf\]'"
    ):
        HFBackend(tmp_path)
