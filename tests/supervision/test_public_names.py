"""The supervision and extension modules keep their public names where they were, after the split
into smaller modules."""

from __future__ import annotations

import importlib

import pytest

import governor.supervision as supervision

MOVED = {
    "governor.supervision.supervisor": ("Supervisor", "SupervisorConfig"),
    "governor.supervision.gating": (
        "AffectClassifier", "CrisisClassifier", "EngagementGate", "GatingRule",
        "PresenceClassifier", "RefusalClassifier", "StateClassifier", "TimeWindowClassifier",
        "CRISIS_PHRASES", "MAX_TEXT", "check_features", "provided", "user_text",
    ),
    "governor.observer_extensions.users": (
        "UserModel", "OfflineUserModel", "OfflineUserConfig", "LLMUserModel", "BANDS", "PERSONA",
        "INTENT", "HOPELESS", "SUPPORT", "DISMISS", "LOW_MOOD", "PROTOCOL", "cues", "distress",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", supervision.__all__)
def test_every_package_name_is_importable(name: str) -> None:
    assert getattr(supervision, name) is not None


@pytest.mark.parametrize(("module", "names"), MOVED.items())
def test_names_stay_importable_from_their_old_modules(module: str, names: tuple[str, ...]) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} lost {missing}"


def test_the_package_and_the_module_give_the_same_objects() -> None:
    from governor.supervision.gating import AffectClassifier
    from governor.supervision.supervisor import Supervisor

    assert supervision.Supervisor is Supervisor and supervision.AffectClassifier is AffectClassifier
