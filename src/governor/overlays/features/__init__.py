"""Feature extractors for overlays, one module per family, registered in :data:`FEATURES`.

Each family module maps a dialogue and a candidate reply to numbers. Imports the core types and
the error tree, and the text resources (VADER, TextBlob, wordfreq); nothing of the loop.
"""

# Importing the family modules registers their features; trajectory comes last (it derives
# drift features from the others).
from governor.overlays.features import (  # noqa: F401
    affect,
    assistance,
    brevity,
    coherence,
    critique,
    degenerate,
    demand,
    instructions,
    specificity,
    tone,
    trajectory,
)
from governor.overlays.features.base import (
    DEFAULT_RESOURCES,
    FEATURES,
    Feature,
    Measurement,
    Resources,
    SpecificityNorms,
    ToneWeights,
    get_feature,
    measure,
    measure_all,
    register,
)
from governor.overlays.features.dialogue import Dialogue, Turn, as_dialogue

__all__ = [
    "DEFAULT_RESOURCES",
    "FEATURES",
    "Dialogue",
    "Feature",
    "Measurement",
    "Resources",
    "SpecificityNorms",
    "ToneWeights",
    "Turn",
    "as_dialogue",
    "get_feature",
    "measure",
    "measure_all",
    "register",
]
