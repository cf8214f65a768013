"""The front door: ``from governor import ...`` gives the names a user needs first, and
``import governor`` imports none of them (nor gymnasium) until they are used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import governor


def run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_every_exported_name_is_the_object_of_its_module() -> None:
    from governor.core import Constraint, Decision, Fallback, Policy, Verdict
    from governor.guard import Guard, load_policy
    from governor.observer import Observer

    expected = {
        "Constraint": Constraint,
        "Decision": Decision,
        "Fallback": Fallback,
        "Guard": Guard,
        "Observer": Observer,
        "Policy": Policy,
        "Verdict": Verdict,
        "load_policy": load_policy,
    }
    assert set(governor.EXPORTS) == set(expected)
    assert set(governor.__all__) == {*expected, "__version__"}
    for name, value in expected.items():
        assert getattr(governor, name) is value
    assert set(expected) <= set(dir(governor))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Gaurd'"):
        _ = governor.Gaurd  # type: ignore[attr-defined]


def test_import_governor_is_light() -> None:
    heavy = ("gymnasium", "numpy", "torch", "httpx", "yaml", "governor.core", "governor.guard")
    code = f"import sys, governor; print([m for m in {heavy!r} if m in sys.modules])"
    assert run(code) == "[]"


@pytest.mark.parametrize(
    "order",
    [
        "import gymnasium, governor",
        "import governor, gymnasium",
        "import governor.envs, gymnasium",
        "import governor; import gymnasium.spaces; import gymnasium",
    ],
)
def test_environments_are_registered_whichever_is_imported_first(order: str) -> None:
    code = f"{order}; print(sorted(i for i in gymnasium.registry if i.startswith('governor/')))"
    assert run(code) == str(
        ["governor/Commerce-v0", "governor/Driving-v0", "governor/Household-v0"]
    )
