"""``governor policy check``: what a policy enforces, in English; one error line on a bad file."""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_helpers import TOOLS_POLICY

from governor.cli import main


def test_check_says_what_the_policy_enforces(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "check", str(TOOLS_POLICY)]) == 0
    out = capsys.readouterr().out
    assert "tools.yaml: valid" in out
    assert "never call send_email after read_secret was called (verified)" in out
    assert "formula: G(read_secret -> G !send_email)" in out
    assert "`send_email` must never be true from then on" in out
    assert "total_over_100: the total amount of transfer_funds calls so far > 100" in out
    assert "at most 2 regeneration(s)" in out and "API key from $OPENAI_API_KEY" in out


def test_a_bad_file_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("propositions: {a: {tool: a}}\nltl:\n  - {name: r, formula: 'G(a -> F b)'}\n")
    assert main(["policy", "check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert (
        err
        == "governor: error: policy.yaml: ltl[0].formula: undeclared proposition(s) b; declared: a"
    )
