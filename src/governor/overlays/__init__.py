"""Overlays: rules over conversation features, calibrated on human data (the Grounded Observer).

Features (:mod:`governor.overlays.features`) turn a dialogue and a candidate reply into numbers;
overlays (:mod:`governor.overlays.rules`, loaded from YAML by :func:`load_overlays`) bound them
with a rigidity epsilon; :class:`OverlayConstraint` puts each overlay in the runtime loop;
:func:`calibrate` estimates the bounds from human corpora (:mod:`governor.overlays.corpora`). The
shipped small-talk set is ``smalltalk.yaml`` (:data:`DEFAULT_OVERLAYS`), and the same set
calibrated with the local embedding model (the package :mod:`governor.overlays.embed`, the
``[embed]`` extra) is ``smalltalk_embed.yaml`` (:data:`EMBED_OVERLAYS`). Each file also carries the
human reference (:class:`HumanReference`) that the observer matches when it ranks admissible
replies. An overlay rule's ``margin`` (adaptive rigidity, :mod:`governor.overlays.rigidity`)
tightens its tolerance as a running value nears a bound; the other extensions of the observer
(lookahead, ensembles, teachable overlays) build on the overlays in
:mod:`governor.observer_extensions`, which the overlays never import.

Imports the core types, the config and the error tree; nothing of the loop or the worlds.
"""

from governor.overlays.calibrate import calibrate, human_acceptance
from governor.overlays.constraint import (
    OverlayConstraint,
    overlay_constraints,
    repeated_violations,
)
from governor.overlays.corpora import CORPORA, HumanTurn, load_turns, split_of
from governor.overlays.features import (
    FEATURES,
    Dialogue,
    Feature,
    Measurement,
    Resources,
    Turn,
    measure,
    measure_all,
)
from governor.overlays.loader import (
    DEFAULT_OVERLAYS,
    DEMAND_OVERLAYS,
    EMBED_OVERLAYS,
    demand_overlays,
    load_overlays,
    load_resources,
    parse_overlays,
)
from governor.overlays.reference import HumanReference, fit_reference
from governor.overlays.rules import Bounds, Condition, Overlay, Scope

__all__ = [
    "CORPORA",
    "DEFAULT_OVERLAYS",
    "DEMAND_OVERLAYS",
    "EMBED_OVERLAYS",
    "FEATURES",
    "Bounds",
    "Condition",
    "Dialogue",
    "Feature",
    "HumanReference",
    "HumanTurn",
    "Measurement",
    "Overlay",
    "OverlayConstraint",
    "Resources",
    "Scope",
    "Turn",
    "calibrate",
    "demand_overlays",
    "fit_reference",
    "human_acceptance",
    "load_overlays",
    "load_resources",
    "load_turns",
    "measure",
    "measure_all",
    "overlay_constraints",
    "parse_overlays",
    "repeated_violations",
    "split_of",
]
