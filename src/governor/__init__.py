"""governor: runtime guardrails for foundation-model agents, built like robot safety controllers.

The front door: the names a user needs first, each imported on first use, so that
``import governor`` stays light::

    from governor import Guard, load_policy                       # the guard facade and its policy file
    from governor import Observer, Policy, Constraint, Fallback   # the runtime loop and its parts
    from governor import Verdict, Decision                        # what a check and a step return

Importing governor also registers the worlds' environments with gymnasium
(``governor/Driving-v0``, ``governor/Commerce-v0``, ``governor/Household-v0``) by entry point:
at once when gymnasium is already imported, otherwise as soon as it is. No world, no backend and
no torch is imported until it is used.

Imports nothing of its own at import time beyond :mod:`governor.envs` (registration); the names
below come from the core loop (:mod:`governor.core`, :mod:`governor.observer`) and the guard
(:mod:`governor.guard`).
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

__version__ = "0.1.0"

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

    from governor.core import Constraint, Decision, Fallback, Policy, Verdict
    from governor.guard import Guard, load_policy
    from governor.observer import Observer

#: Each public name and the module that defines it.
EXPORTS = {
    "Guard": "governor.guard",
    "load_policy": "governor.guard",
    "Observer": "governor.observer",
    "Policy": "governor.core",
    "Constraint": "governor.core",
    "Verdict": "governor.core",
    "Decision": "governor.core",
    "Fallback": "governor.core",
}

__all__ = [
    "Constraint",
    "Decision",
    "Fallback",
    "Guard",
    "Observer",
    "Policy",
    "Verdict",
    "__version__",
    "load_policy",
]


def __getattr__(name: str) -> Any:
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'governor' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *EXPORTS})


class _RegisterWhenGymnasiumLoads:
    """A finder on ``sys.meta_path`` (the protocol of ``importlib.abc.MetaPathFinder``, not
    the class: importing ``importlib.abc`` costs more than the rest of this module) that
    registers governor's environments right after gymnasium is imported, then leaves."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _register()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _register() -> None:
    from governor.envs import register_envs

    register_envs()


if "gymnasium" in sys.modules:
    _register()
elif not any(isinstance(f, _RegisterWhenGymnasiumLoads) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWhenGymnasiumLoads())
