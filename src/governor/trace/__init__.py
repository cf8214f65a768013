"""Decision traces: every decision with everything it was based on, as JSON lines or in SQLite.

Writers (:func:`open_trace`, :class:`JsonlTrace`, :class:`SqliteTrace`), reading back
(:func:`read_trace`), replay (:func:`decision_from_record`) and the terminal view
(:func:`render_trace`). Imports the core types and the error tree only.
"""

from governor.trace.jsonable import dumps, from_json_float, to_jsonable
from governor.trace.read import read_trace
from governor.trace.record import decision_from_record, decision_record, step_seconds
from governor.trace.render import render_trace
from governor.trace.store import (
    JSONL_SUFFIXES,
    SQLITE_SUFFIXES,
    JsonlTrace,
    SqliteTrace,
    TraceWriter,
    open_trace,
    trace_format,
)

__all__ = [
    "JSONL_SUFFIXES",
    "SQLITE_SUFFIXES",
    "JsonlTrace",
    "SqliteTrace",
    "TraceWriter",
    "decision_from_record",
    "decision_record",
    "dumps",
    "from_json_float",
    "open_trace",
    "read_trace",
    "render_trace",
    "step_seconds",
    "to_jsonable",
    "trace_format",
]
