"""Base policies: the agents the guard filters (never trusted)."""

from governor.agents.driving import (
    ErraticPolicy,
    LLMDrivingPolicy,
    NominalController,
    parse_choice,
)

__all__ = ["ErraticPolicy", "LLMDrivingPolicy", "NominalController", "parse_choice"]
