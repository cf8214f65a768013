"""The local model's cache, --model-path, the atomic fetch and `governor model` (no weights)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from governor.backends import backend_from_config, local_fetch
from governor.backends.local_model import (
    GGUF_SHA256,
    LOCAL_MODEL,
    MARKER,
    fetched_dir,
    model_dir,
    resolve_model_path,
)
from governor.cli import main
from governor.cli.model import server_command
from governor.config import BackendConfig
from governor.errors import BackendUnavailable, ConfigError
from governor.flags import add_backend_args, backend_config_from_args


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_the_cache_is_keyed_by_the_sha256_under_governor_cache_dir(cache: Path) -> None:
    assert model_dir() == cache / "models" / GGUF_SHA256[:16]
    assert fetched_dir() is None


def test_a_folder_without_the_fetch_record_is_not_a_fetched_model(cache: Path) -> None:
    folder = model_dir()
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    assert fetched_dir() is None
    (folder / MARKER).write_text(json.dumps({"sha256": "another"}))
    assert fetched_dir() is None
    (folder / MARKER).write_text(json.dumps({"sha256": GGUF_SHA256}))
    assert fetched_dir() == folder


def test_model_path_names_the_fetched_model_or_a_folder(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(
        BackendUnavailable, match=r"expected the fetched model .* governor model fetch"
    ):
        resolve_model_path(LOCAL_MODEL)
    assert resolve_model_path(tmp_path / "mine") == tmp_path / "mine"
    with pytest.raises(ConfigError, match="--model-path"):
        resolve_model_path(" ")


def test_the_model_path_selects_the_in_process_backend(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="governor model fetch"):
        backend_from_config(BackendConfig(model_path=LOCAL_MODEL))
    with pytest.raises(BackendUnavailable, match="found nothing at that path"):
        backend_from_config(BackendConfig(base_url="http://x/v1", model="m", model_path="absent"))


def test_every_backend_command_takes_model_path_and_the_environment_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parser = argparse.ArgumentParser()
    add_backend_args(parser)
    monkeypatch.delenv("GOVERNOR_MODEL_PATH", raising=False)
    assert backend_config_from_args(parser.parse_args([])).model_path is None
    args = parser.parse_args(["--model-path", LOCAL_MODEL])
    assert backend_config_from_args(args).model_path == LOCAL_MODEL
    monkeypatch.setenv("GOVERNOR_MODEL_PATH", "/models/x")
    assert backend_config_from_args(parser.parse_args([])).model_path == "/models/x"


def test_a_commands_own_model_path_flag_keeps_its_meaning() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", help="this command's own")
    add_backend_args(parser)
    args = parser.parse_args(["--model-path", "mine"])
    assert args.model_path == "mine" and backend_config_from_args(args).model_path is None


class FakePackage:
    """Stands for the model package: ``assemble`` writes a file; ``_convert`` is patched."""

    EXPECTED_SHA256 = GGUF_SHA256
    __file__ = "/nonexistent/package/__init__.py"


def test_a_fetch_that_fails_midway_leaves_no_folder(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def convert(package: Any, out: Path) -> None:
        out.mkdir()
        (out / "model.safetensors").write_text("half")
        raise BackendUnavailable("killed halfway")

    monkeypatch.setattr(local_fetch, "_import_package", lambda: FakePackage())
    monkeypatch.setattr(local_fetch, "_convert", convert)
    with pytest.raises(BackendUnavailable, match="killed halfway"):
        local_fetch.fetch()
    assert fetched_dir() is None and not model_dir().exists()
    assert list((cache / "models").iterdir()) == []  # no temporary folder left either


def test_a_fetch_is_renamed_into_place_once_and_then_instant(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def convert(package: Any, out: Path) -> None:
        calls.append(out)
        out.mkdir()
        assert not model_dir().exists()  # written beside, never in place
        (out / MARKER).write_text(json.dumps({"sha256": GGUF_SHA256}))

    monkeypatch.setattr(local_fetch, "_import_package", lambda: FakePackage())
    monkeypatch.setattr(local_fetch, "_convert", convert)
    first = local_fetch.fetch()
    again = local_fetch.fetch()
    assert first.converted and not again.converted and first.path == again.path == model_dir()
    assert len(calls) == 1 and calls[0].name.startswith(f".{model_dir().name}.tmp-")


def test_model_path_and_serve_commands(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "path"]) == 1
    assert "gemma3-270m is not fetched" in capsys.readouterr().out
    assert main(["model", "serve", "--port", "8099"]) == 2
    err = capsys.readouterr().err
    assert "llama-cpp-python" in err and "-DGGML_NATIVE=OFF" in err
    folder = model_dir()
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(json.dumps({"sha256": GGUF_SHA256}))
    assert main(["model", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(folder)


def test_the_server_listens_on_loopback_only() -> None:
    command = server_command(Path("/m/x.gguf"), 8099, 2048)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--port") + 1] == "8099"
    assert command[command.index("--n_threads") + 1] == "1"
