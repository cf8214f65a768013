"""Marks whose tests must run: a skip of such a test fails the run (CI sets them).

``GOVERNOR_REQUIRE_MARKS=model,postgres`` (comma-separated mark names; ``.ci/run`` sets it)
turns every skip of a test carrying one of those marks into a failure that names the mark and the
skip's reason, and fails the session when no test of a required mark passed (a module skipped at
import, or deselected, leaves none to count). Without the variable nothing changes: the tests
are skipped, each with its reason, as usual. Registered by ``tests/conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

ENV = "GOVERNOR_REQUIRE_MARKS"
PROPERTY = "governor_required_marks"  # the report's user property naming the test's required marks


def required_marks() -> tuple[str, ...]:
    """The mark names the environment requires to run (none when the variable is unset)."""
    return tuple(m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip())


class RequiredMarks:
    """Fails skipped tests of the required marks, and a session where one of them never passed."""

    def __init__(self, marks: tuple[str, ...]) -> None:
        self.marks = marks
        self.passed = dict.fromkeys(marks, 0)
        self.problems: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        marks = [m for m in self.marks if item.get_closest_marker(m) is not None]
        if not marks or hasattr(report, "wasxfail"):
            return report
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            report.outcome = "failed"
            report.longrepr = (
                f"skipped, but {ENV} requires the tests marked {', '.join(marks)} to run: {reason}"
            )
        elif report.when == "call" and report.passed:
            report.user_properties.append((PROPERTY, ",".join(marks)))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == PROPERTY and report.when == "call" and report.passed:
                for mark in str(value).split(","):
                    if mark in self.passed:
                        self.passed[mark] += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.config.option.collectonly or hasattr(session.config, "workerinput"):
            return  # an xdist worker: the controller sees every worker's reports
        self.problems = [
            f"{ENV}: no test marked {mark!r} passed in this run"
            for mark in self.marks
            if self.passed[mark] == 0
        ]
        if self.problems and session.exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for problem in self.problems:
            terminalreporter.write_line(f"FAILED {problem}", red=True, bold=True)


def pytest_configure(config: pytest.Config) -> None:
    marks = required_marks()
    if marks:
        config.pluginmanager.register(RequiredMarks(marks), "governor-required-marks")
