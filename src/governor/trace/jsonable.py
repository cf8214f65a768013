"""Any Python value as strict, bounded JSON: what the trace stores, and floats read back.

:func:`to_jsonable` never raises and never loops: dataclasses, enums, numpy values, paths and
containers become JSON values; cycles, depth past 64 and unrepresentable objects become text;
non-finite floats become "NaN"/"Infinity" strings that :func:`from_json_float` reads back.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping
from enum import Enum
from pathlib import PurePath
from typing import Any

import numpy as np

_MAX_DEPTH = 64


_MAX_HEX_BYTES = 256


def to_jsonable(obj: Any) -> Any:
    """A JSON-safe copy of ``obj``; never raises.

    numpy arrays become lists and numpy scalars Python numbers; dataclasses dicts of their fields;
    enums their value; mappings dicts with string keys (other keys as JSON text); tuples and lists
    lists; sets sorted lists; paths strings; bytes ``{"bytes": length, "hex": ...}`` (the hex only
    up to 256 bytes). Non-finite floats become the strings ``"NaN"``, ``"Infinity"`` and
    ``"-Infinity"``. Anything else, a cycle, or nesting deeper than 64 becomes its ``repr``.
    """
    return _jsonable(obj, 0, set())


_AS_IS = frozenset({str, int, bool, type(None)})
"""Exact types that are their own JSON value (subclasses take the general path)."""


def _jsonable(obj: Any, depth: int, seen: set[int]) -> Any:
    """``obj`` as JSON; ``seen`` holds the ids of the containers being converted (its ancestors)."""
    cls: type = type(obj)
    if cls in _AS_IS:
        return obj
    if cls is float:
        return _float(obj)
    try:
        if isinstance(obj, _SCALARS):
            return _scalar(obj, depth, seen)
        key = id(obj)
        if depth >= _MAX_DEPTH or key in seen:
            return _repr(obj)
        seen.add(key)
        try:
            out = _container(obj, cls, depth + 1, seen)
        finally:
            seen.discard(key)
        if out is not _NOT_A_CONTAINER:
            return out
    except Exception:
        pass
    return _repr(obj)


_SCALARS = (Enum, int, str, float, np.generic, PurePath, bytes, bytearray, memoryview)


def _scalar(obj: Any, depth: int, seen: set[int]) -> Any:
    if isinstance(obj, Enum):
        return _jsonable(obj.value, depth + 1, seen)
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, (int, str)):
        return int(obj) if isinstance(obj, int) else str(obj)
    if isinstance(obj, float):
        return _float(float(obj))
    if isinstance(obj, np.generic):
        return _jsonable(obj.item(), depth + 1, seen)
    if isinstance(obj, PurePath):
        return str(obj)
    data = bytes(obj)
    hexed = {"hex": data.hex()} if len(data) <= _MAX_HEX_BYTES else {}
    return {"bytes": len(data), **hexed}


_NOT_A_CONTAINER = object()


def _container(obj: Any, cls: type, depth: int, seen: set[int]) -> Any:
    """The JSON of a container whose children sit at ``depth``; else :data:`_NOT_A_CONTAINER`."""
    if cls is dict:
        return _mapping(obj, depth, seen)
    if cls is list or cls is tuple:
        return [_jsonable(item, depth, seen) for item in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist(), depth, seen)
    names = _field_names(cls)
    if names is not None:
        return {name: _jsonable(getattr(obj, name), depth, seen) for name in names}
    if isinstance(obj, Mapping):
        return _mapping(obj, depth, seen)
    if isinstance(obj, (list, tuple)):
        return [_jsonable(item, depth, seen) for item in obj]
    if isinstance(obj, (set, frozenset)):
        items = [_jsonable(item, depth, seen) for item in obj]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    return _NOT_A_CONTAINER


def _mapping(obj: Mapping[Any, Any], depth: int, seen: set[int]) -> dict[str, Any]:
    return {
        k if type(k) is str else _key(k, depth, seen): _jsonable(v, depth, seen)
        for k, v in obj.items()
    }


@functools.lru_cache(maxsize=512)
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type, in order (cached per type); None for any other."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


def _float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _key(key: Any, depth: int, seen: set[int]) -> str:
    value = _jsonable(key, depth, seen)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _repr(obj: Any) -> str:
    try:
        return repr(obj)
    except Exception:
        return f"<unrepresentable {type(obj).__name__}>"


def dumps(value: Any) -> str:
    """Strict JSON text of a value made by :func:`to_jsonable` (one line, ASCII)."""
    return json.dumps(value, allow_nan=False)


_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def from_json_float(value: Any) -> float | None:
    """A float as :func:`governor.trace.to_jsonable` wrote it ("Infinity" etc.); None stays."""
    if value is None:
        return None
    return _NONFINITE[value] if isinstance(value, str) else float(value)
