"""Config dataclasses refuse values of the wrong type, naming the field, what was expected and
what was found, whether built in Python or read from a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from governor.config import BackendConfig, ObserverConfig, from_mapping
from governor.errors import ConfigError
from governor.files import load_mapping


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("max_regenerations", 2.5, "max_regenerations: expected an integer, found 2.5"),
        ("n_candidates", True, "n_candidates: expected an integer, found True"),
        ("stop_on_repeat", "no", "stop_on_repeat: expected true or false, found 'no'"),
        ("time_budget_s", "30", "time_budget_s: expected a number, found '30'"),
        ("weights", {"a": "x"}, "weights: expected a mapping of names to a number"),
        ("arbitration", "vote", "arbitration: expected one of intersection, majority, weighted"),
    ],
)
def test_observer_config_checks_types(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ObserverConfig(**{field: value})  # type: ignore[arg-type]


def test_no_time_budget_is_an_explicit_choice() -> None:
    assert ObserverConfig().time_budget_s == 30.0
    assert ObserverConfig(time_budget_s=None).time_budget_s is None


@pytest.mark.parametrize(
    "field, value", [("base_url", 42), ("model", ["m"]), ("max_retries", 1.5), ("timeout_s", None)]
)
def test_backend_config_checks_types(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"^{field}: expected"):
        BackendConfig(**{field: value})  # type: ignore[arg-type]


def test_a_file_value_of_the_wrong_type_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "observer.yaml"
    path.write_text("max_regenerations: 2.5\nstop_on_repeat: no\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"^observer.yaml: max_regenerations: expected an integer"
    ):
        from_mapping(ObserverConfig, load_mapping(path), where="observer.yaml")
