"""A real MCP server over stdio for the gateway's tests (FastMCP from the ``mcp`` SDK).

Tools ``verify_identity``, ``refund``, ``lookup_order`` and ``delete_account``; each call it
receives is appended, as one JSON line, to the file named by its first argument, so a test can
tell which calls reached it. Run: ``python refund_server.py CALLS.jsonl`` (stdio) or
``python refund_server.py CALLS.jsonl PORT`` (streamable HTTP at ``http://127.0.0.1:PORT/mcp``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

CALLS = Path(sys.argv[1])
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
server = FastMCP("refund-desk", host="127.0.0.1", port=PORT or 8000)


def _seen(tool: str, **args: object) -> None:
    with CALLS.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def verify_identity(customer: str) -> str:
    """Verify the customer's identity."""
    _seen("verify_identity", customer=customer)
    return f"{customer} is verified"


@server.tool()
def refund(customer: str, amount: float) -> str:
    """Refund an amount to the customer."""
    _seen("refund", customer=customer, amount=amount)
    return f"refunded {amount} to {customer}"


@server.tool()
def lookup_order(order: str) -> str:
    """Look up an order."""
    _seen("lookup_order", order=order)
    return f"order {order}: 2 items, shipped"


@server.tool()
def delete_account(customer: str) -> str:
    """Delete the customer's account."""
    _seen("delete_account", customer=customer)
    return f"deleted {customer}"


if __name__ == "__main__":
    server.run("streamable-http" if PORT else "stdio")
