"""The shipped demand overlays (``governor/overlays/demand.yaml``): lower demand as affect worsens."""

from __future__ import annotations

from pathlib import Path

from governor.overlays import loader
from governor.overlays.rules import Overlay

DEMAND_OVERLAYS = Path(loader.__file__).with_name("demand.yaml")


def demand_overlays() -> list[Overlay]:
    """The demand overlays, read with the existing loader (highest priority first)."""
    return loader.load_overlays(DEMAND_OVERLAYS)
