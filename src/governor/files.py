"""Reading and writing the files governor is configured by and reports to: UTF-8 text with the
byte offset of a bad byte named, YAML or JSON mappings, indented JSON results.

Imports the error tree only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from governor.errors import ConfigError, expected


def read_text(path: str | Path) -> str:
    """The UTF-8 text of a file; a ConfigError names the file and, for bytes that are not UTF-8,
    their offset."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        found = f"the bytes {data[exc.start : exc.start + 4]!r} at byte offset {exc.start}"
        raise ConfigError(f"{path}: expected UTF-8 text, found {found}") from exc


def load_mapping(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON file holding one mapping."""
    path = Path(path)
    text = read_text(path)
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: {expected('a mapping at the top level', type(data).__name__)}")
    return data


def write_json(path: Path, data: Any, what: str = "--json") -> None:
    """Write ``data`` to ``path`` as indented JSON, creating the folder.

    A path that cannot be written is a ConfigError naming ``what`` (the option that gave it).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{what}: cannot write {path}: {exc.strerror}") from exc
