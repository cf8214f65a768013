"""The demo's report folder: one index.html of sections, each with text, a table and pictures."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th { background: #f3f3f3; } td:first-child, td:nth-child(2) { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; } code { background: #f3f3f3; padding: 1px 4px; }
"""


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    table: list[list[str]] = field(default_factory=list)  # first row is the header
    images: list[str] = field(default_factory=list)  # file names inside the report folder
    files: list[str] = field(default_factory=list)  # other files worth a link
    more_tables: list[tuple[str, list[list[str]]]] = field(default_factory=list)  # (caption, rows)


def table_html(rows: Sequence[Sequence[str]]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:]
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def write_index(folder: Path, title: str, sections: Sequence[Section]) -> Path:
    """Write ``folder/index.html`` linking every section's tables, pictures and files."""
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"]
    parts.append(f"<style>{STYLE}</style><h1>{html.escape(title)}</h1>")
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        parts.extend(f"<p>{p}</p>" for p in s.paragraphs)  # paragraphs are trusted HTML
        parts.append(table_html(s.table))
        for caption, rows in s.more_tables:
            parts.append(f"<h3>{html.escape(caption)}</h3>{table_html(rows)}")
        parts.extend(
            f"<p><img src='{html.escape(i)}' alt='{html.escape(i)}'></p>" for i in s.images
        )
        if s.files:
            links = ", ".join(f"<a href='{html.escape(f)}'>{html.escape(f)}</a>" for f in s.files)
            parts.append(f"<p>Files: {links}</p>")
    path = folder / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def print_table(console: Console, title: str, rows: Sequence[Sequence[str]]) -> None:
    """A table whose headers and cells are never cut: it is printed as wide as it needs."""
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for i, name in enumerate(rows[0]):
        table.add_column(name, justify="left" if i < 2 else "right", no_wrap=True)
    for row in rows[1:]:
        table.add_row(*row)
    widths = [max(len(str(row[i])) for row in rows if i < len(row)) for i in range(len(rows[0]))]
    needed = sum(widths) + 3 * len(widths) + 2
    before = console.width  # rich caps a print's width at the console's: widen it for this table
    console.width = max(before, needed)
    try:
        console.print(table)
    finally:
        console.width = before


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines) + "\n"
