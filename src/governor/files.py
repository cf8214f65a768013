"""Reading and writing the files governor is configured by and reports to: UTF-8 text with the
byte offset of a bad byte named, YAML or JSON mappings (at most :data:`MAX_MAPPING_BYTES`),
indented JSON results; JSON-lines sets (:func:`json_lines`); and :func:`json_loads`, the JSON
reader for untrusted text.

Imports the error tree only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import yaml

from governor.errors import ConfigError, expected

MAX_MAPPING_BYTES = 4 * 2**20
"""The largest config, policy, overlay, spec or domain file read (4 MB)."""


def json_loads(text: str | bytes, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """``json.loads`` for untrusted text: nesting too deep for the parser (Python's JSON reader
    recurses) is a :class:`json.JSONDecodeError` like any other malformed input, not a
    ``RecursionError``. ``parse_constant``: as ``json.loads`` takes it (for ``NaN`` and the
    infinities)."""
    try:
        return json.loads(text, parse_constant=parse_constant)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None


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


def json_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSON-lines file, read, with its 1-based line number; a line that
    is not JSON is a ConfigError naming the file and the line."""
    for i, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield i, json_loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{path}:{i}: {expected('a JSON object', line[:60])} ({exc})"
            ) from None


def load_mapping(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON file holding one mapping (at most :data:`MAX_MAPPING_BYTES`; nesting
    too deep for the parser is refused like any other invalid file)."""
    path = Path(path)
    with suppress(OSError):  # a file that cannot be read is named by read_text
        size = path.stat().st_size
        if size > MAX_MAPPING_BYTES:
            found = f"{size:,} bytes"
            raise ConfigError(f"{path}: {expected(f'at most {MAX_MAPPING_BYTES:,} bytes', found)}")
    text = read_text(path)
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        data = json_loads(text) if kind == "JSON" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid {kind}: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: not valid {kind}: nested too deeply") from None
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
