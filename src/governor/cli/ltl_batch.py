"""``governor ltl translate --file``: translate a file of sentences in one run.

One record a sentence: ``{"line", "text", "ok", "formula" (infix), "prefix", "pattern",
"reading", "error", "ambiguous", "alternatives"}``; a line too long fails its own record and
the others go on. Also the translation step the single-sentence command shares, and the CLI's
one-line JSON printer.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.errors import ConfigError, expected
from governor.files import read_text, write_json
from governor.ltl.domain import Domain
from governor.ltl.english.lang2ltl import translate_all
from governor.ltl.english.readback import english
from governor.ltl.english.translate import Translation, translate_offline
from governor.ltl.parser import to_prefix

MAX_SENTENCES = 10_000
"""Most sentences a ``--file`` may hold."""
MAX_SENTENCE_CHARS = 1_000
"""Longest sentence line of a ``--file``; a longer one fails its record."""
BATCH_HELP = (
    "translate the sentences of a text file, one a line (blank lines and lines starting with #"
    f" are skipped; at most {MAX_SENTENCES:,} sentences of at most {MAX_SENTENCE_CHARS:,}"
    " characters); prints one summary line; exit status 1 when any sentence failed. With --out"
    ' (or --json: to stdout) the records are {"domain": NAME, "records": [{"line", "text", "ok",'
    ' "formula" (infix), "prefix", "pattern", "reading" (English, with the choices made),'
    ' "error", "ambiguous", "alternatives": [{"formula", "pattern", "reading"}]}, ...]}'
)


def translate_sentences(
    sentences: list[str], domain: Domain, backend: Any, convention: str | None
) -> list[Translation]:
    """Offline with the named convention (None: the domain's, else the default), or through
    ``backend`` (the default convention)."""
    if backend is None:
        return [translate_offline(x, domain, convention) for x in sentences]
    return translate_all(sentences, domain, backend)


def alternatives(t: Translation | None) -> list[dict[str, Any]]:
    """The other readings of an ambiguous sentence: formula, pattern and reading of each."""
    return [
        {"formula": str(a.formula), "pattern": a.pattern, "reading": a.reading}
        for a in (t.alternatives if t else ())
    ]


def print_json(console: Console, data: Any) -> None:
    """``data`` as one line of JSON, neither wrapped nor marked up."""
    console.print(json.dumps(data), markup=False, highlight=False, soft_wrap=True)


def read_sentences(path: Path) -> list[tuple[int, str]]:
    """(line number, sentence) of each sentence line: blank and ``#`` lines skipped."""
    lines = [(i, x.strip()) for i, x in enumerate(read_text(path).splitlines(), 1)]
    out = [(i, x) for i, x in lines if x and not x.startswith("#")]
    if not out or len(out) > MAX_SENTENCES:
        what = f"1 to {MAX_SENTENCES:,} sentences, one a line"
        raise ConfigError(f"{path}: {expected(what, f'{len(out):,} sentences')}")
    return out


def batch_command(args: argparse.Namespace, domain: Domain, backend: Any, console: Console) -> int:
    """Translate every sentence of ``--file``; write the records; one summary line."""
    lines = read_sentences(args.file)
    fits = [(n, x) for n, x in lines if len(x) <= MAX_SENTENCE_CHARS]
    found = translate_sentences([x for _, x in fits], domain, backend, args.convention)
    done = dict(zip([n for n, _ in fits], found, strict=True))
    records = []
    for n, text in lines:
        t = done.get(n)
        f = t.formula if t else None
        error = expected(f"at most {MAX_SENTENCE_CHARS:,} characters", len(text))
        records.append(
            {"line": n, "text": text, "ok": f is not None, "formula": f and str(f)}
            | {"prefix": f and to_prefix(f), "pattern": t and t.pattern}
            | {"reading": f and ((t and t.reading) or english(f, domain))}
            | {"error": t.error if t else error}
            | {"ambiguous": bool(t and t.ambiguous), "alternatives": alternatives(t)}
        )
    data = {"domain": domain.name, "records": records}
    if args.out is not None:
        write_json(args.out, data, "--out")
    failed = sum(not r["ok"] for r in records)
    if args.json:
        print_json(console, data)
    else:
        console.print(
            f"{len(records)} sentences, {len(records) - failed} translated, {failed} failed"
        )
    return 1 if failed else 0
