"""Any Python value as strict, bounded JSON: what the trace stores, and floats read back.

:func:`to_jsonable` never raises and never loops: dataclasses, enums, numpy values, paths and
containers become JSON values; cycles, depth past 64 and unrepresentable objects become text;
non-finite floats become "NaN"/"Infinity" strings that :func:`from_json_float` reads back.
"""

from __future__ import annotations

import dataclasses
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
    return _jsonable(obj, 0, frozenset())


def _jsonable(obj: Any, depth: int, seen: frozenset[int]) -> Any:
    try:
        if isinstance(obj, Enum):
            return _jsonable(obj.value, depth + 1, seen)
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, (int, str)):
            return int(obj) if isinstance(obj, int) else str(obj)
        if isinstance(obj, float):
            return _float(float(obj))
        if isinstance(obj, np.generic):
            return _jsonable(obj.item(), depth + 1, seen)
        if isinstance(obj, PurePath):
            return str(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            data = bytes(obj)
            hexed = {"hex": data.hex()} if len(data) <= _MAX_HEX_BYTES else {}
            return {"bytes": len(data), **hexed}
        if depth >= _MAX_DEPTH or id(obj) in seen:
            return _repr(obj)
        seen, depth = seen | {id(obj)}, depth + 1
        if isinstance(obj, np.ndarray):
            return _jsonable(obj.tolist(), depth, seen)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            fields = dataclasses.fields(obj)
            return {f.name: _jsonable(getattr(obj, f.name), depth, seen) for f in fields}
        if isinstance(obj, Mapping):
            return {_key(k, depth, seen): _jsonable(v, depth, seen) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [_jsonable(item, depth, seen) for item in obj]
        if isinstance(obj, (set, frozenset)):
            items = [_jsonable(item, depth, seen) for item in obj]
            return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    except Exception:
        pass
    return _repr(obj)


def _float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _key(key: Any, depth: int, seen: frozenset[int]) -> str:
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
