"""GOVERNOR_REQUIRE_MARKS: in CI a skipped ``model`` or ``postgres`` test fails the run.

Each test runs a tiny inner suite (pytester) with the ``required_marks`` plugin and checks its
outcome with and without the variable.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import required_marks
from required_marks import ENV

INI = """
[pytest]
markers =
    model: needs the local model
    postgres: needs a PostgreSQL server
"""

SUITE = """
import pytest

@pytest.fixture
def local_model():
    pytest.skip("the model is not fetched")

@pytest.mark.model
def test_with_model(local_model):
    assert local_model

@pytest.mark.postgres
def test_with_postgres():
    assert True

def test_plain():
    assert True
"""


def run(pytester: pytest.Pytester, suite: str) -> pytest.RunResult:
    pytester.makeini(INI)
    pytester.makepyfile(test_inner=suite)
    return pytester.runpytest("-p", "required_marks", "-rA")


def test_without_the_variable_a_skip_stays_a_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    result = run(pytester, SUITE)
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == pytest.ExitCode.OK


def test_a_skipped_required_test_fails_with_its_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "model,postgres")
    result = run(pytester, SUITE)
    result.assert_outcomes(passed=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*requires the tests marked model to run*not fetched*"])
    result.stdout.fnmatch_lines(["*no test marked 'model' passed*"])
    assert "no test marked 'postgres' passed" not in result.stdout.str()


def test_a_skip_mark_on_a_required_test_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "postgres")
    suite = SUITE.replace("@pytest.mark.postgres", "@pytest.mark.postgres\n@pytest.mark.skip")
    result = run(pytester, suite)
    result.assert_outcomes(passed=1, skipped=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_required_mark_with_no_test_at_all_fails_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "model")
    suite = 'import pytest\npytest.importorskip("no_such_module_here")\n' + SUITE
    result = run(pytester, suite)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*no test marked 'model' passed*"])


def test_required_tests_that_run_and_pass_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "model,postgres")
    suite = SUITE.replace('pytest.skip("the model is not fetched")', "return 1")
    result = run(pytester, suite)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("model_test", ["passes", "is skipped"])
def test_under_xdist_the_workers_tests_are_counted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, model_test: str
) -> None:
    """With ``-n 2`` the tests run in worker processes and the check is the controller's."""
    pytest.importorskip("xdist", reason="pytest-xdist is in the [dev] extra")
    monkeypatch.setenv(ENV, "model,postgres")
    suite = SUITE
    if model_test == "passes":
        suite = SUITE.replace('pytest.skip("the model is not fetched")', "return 1")
    support = str(Path(required_marks.__file__).parent)  # the workers import the plugin
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([support, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the two plugins: faster
    pytester.makeini(INI)
    pytester.makepyfile(test_inner=suite)
    args = ("-p", "required_marks", "-p", "xdist.plugin", "-n", "2", "-rA")
    result = pytester.runpytest_subprocess(*args)
    if model_test == "passes":
        result.assert_outcomes(passed=3)
        assert result.ret == pytest.ExitCode.OK
        assert "no test marked" not in result.stdout.str()
    else:
        result.assert_outcomes(passed=2, errors=1)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["*requires the tests marked model to run*not fetched*"])
        result.stdout.fnmatch_lines(["*no test marked 'model' passed*"])
