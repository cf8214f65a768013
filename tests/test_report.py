"""The report helpers: a printed table is never cut, however narrow the console."""

from __future__ import annotations

import io

from rich.console import Console

from governor.report import print_table


def test_a_table_wider_than_the_console_is_printed_whole() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80)
    long = "v" * 150
    print_table(console, "wide", [["name", "value"], ["row", long]])
    text = out.getvalue()
    assert long in text and "…" not in text
    assert console.width == 80  # the console is left as it was
