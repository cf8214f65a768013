"""governor: runtime guardrails for foundation-model agents, built like robot safety controllers."""

__version__ = "0.1.0"
