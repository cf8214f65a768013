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


def to_jsonable(obj: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of ``obj``; never raises. ``depth``: how many containers ``obj`` sits
    in, in a value built of such copies (they count toward the bound of 64 below).

    numpy arrays become lists and numpy scalars Python numbers; dataclasses dicts of their fields;
    enums their value; mappings dicts with string keys (other keys as JSON text); tuples and lists
    lists; sets sorted lists; paths strings; bytes ``{"bytes": length, "hex": ...}`` (the hex only
    up to 256 bytes). Non-finite floats become the strings ``"NaN"``, ``"Infinity"`` and
    ``"-Infinity"``. Anything else, a cycle, or nesting deeper than 64 becomes its ``repr``.
    """
    cls = type(obj)
    if cls in _AS_IS:  # as _jsonable does first, without a set made for nothing
        return obj
    if cls is float:
        return _float(obj)
    return _jsonable(obj, depth, set())


_AS_IS = frozenset({str, int, bool, type(None)})
"""Exact types that are their own JSON value (subclasses take the general path)."""
_INF = math.inf


def _jsonable(obj: Any, depth: int, seen: set[int]) -> Any:
    """``obj`` as JSON; ``seen`` holds the ids of the containers being converted (its ancestors)."""
    cls: type = type(obj)
    if cls in _AS_IS:
        return obj
    if cls is float:
        return _float(obj)
    try:
        kind = _KINDS.get(cls)
        if kind is None:
            kind = _kind_of(cls)
        if kind is _SCALAR or (kind is _OTHER and isinstance(obj, _SCALARS)):  # a proxy too
            return _scalar(obj, depth, seen)
        key = id(obj)
        if depth >= _MAX_DEPTH or key in seen:
            return _repr(obj)
        seen.add(key)
        try:
            out = _container(obj, kind, depth + 1, seen)
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
_SCALAR, _DICT, _SEQUENCE, _OTHER = "scalar", "dict", "sequence", "other"
_KINDS: dict[type, str | tuple[str, ...]] = {dict: _DICT, list: _SEQUENCE, tuple: _SEQUENCE}
"""How each type met so far is converted: a kind, or a dataclass's field names (in order)."""
_MAX_KINDS = 4096


def _kind_of(cls: type) -> str | tuple[str, ...]:
    """How an instance of ``cls`` is converted, in the order of precedence: a scalar (a dataclass
    that is also a string is a string), an exact dict, list or tuple, a numpy array, a
    dataclass, then anything else (:func:`_container` tells mappings, sequences and sets apart).
    Kept per type (a bounded number of types)."""
    kind: str | tuple[str, ...]
    if issubclass(cls, _SCALARS):
        kind = _SCALAR
    elif issubclass(cls, np.ndarray) or not dataclasses.is_dataclass(cls):
        kind = _OTHER
    else:
        kind = tuple(f.name for f in dataclasses.fields(cls))
    if len(_KINDS) < _MAX_KINDS:
        _KINDS[cls] = kind
    return kind


def _container(obj: Any, kind: str | tuple[str, ...], depth: int, seen: set[int]) -> Any:
    """The JSON of a container whose children sit at ``depth``; else :data:`_NOT_A_CONTAINER`.
    A child of an exact plain type (a finite float too) is taken as is, without a call."""
    if kind is _DICT:
        return _mapping(obj, depth, seen)
    if kind is _SEQUENCE:
        return [
            v
            if (t := type(v)) in _AS_IS or (t is float and -_INF < v < _INF)
            else _jsonable(v, depth, seen)
            for v in obj
        ]
    if type(kind) is tuple:  # a dataclass's field names
        return {
            name: v
            if (t := type(v := getattr(obj, name))) in _AS_IS or (t is float and -_INF < v < _INF)
            else _jsonable(v, depth, seen)
            for name in kind
        }
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist(), depth, seen)
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
        k if type(k) is str else _key(k, depth, seen): v
        if (t := type(v)) in _AS_IS or (t is float and -_INF < v < _INF)
        else _jsonable(v, depth, seen)
        for k, v in obj.items()
    }


def fields_jsonable(obj: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """``to_jsonable(obj)`` of a dataclass instance, less the conversion of the fields named in
    ``given``: those hold the values given instead (JSON-safe; each in its field's place)."""
    kind = _KINDS.get(type(obj)) or _kind_of(type(obj))
    if type(kind) is not tuple:
        raise TypeError(f"expected a dataclass instance, found {type(obj).__name__}")
    seen = {id(obj)}
    return {
        name: given[name]
        if name in given
        else v
        if (t := type(v := getattr(obj, name))) in _AS_IS or (t is float and -_INF < v < _INF)
        else _jsonable(v, 1, seen)
        for name in kind
    }


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
