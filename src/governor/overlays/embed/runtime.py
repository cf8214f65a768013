"""Which local embedding the observer uses: ONNX Runtime, torch, or a static table.

:func:`local_embed` reads ``$GOVERNOR_EMBED_RUNTIME``. It lives apart from the encoders so that
the encoders' modules do not import the tables built from them. Imports the encoders
(:mod:`.minilm`, :mod:`.onnx_graph`) and the learned table (:mod:`.learned_table`).
"""

from __future__ import annotations

import os

from governor.errors import ConfigError
from governor.overlays.embed import learned_table, minilm, onnx_graph

RUNTIMES = ("onnx", "onnx-int8", "torch", "static-learned")


def local_embed() -> minilm.LocalEmbed | minilm.OnnxEmbed | learned_table.LearnedEmbed:
    """The shared local encoder: ONNX Runtime (fp32) where onnxruntime is installed, else torch.

    ``$GOVERNOR_EMBED_RUNTIME`` (one of :data:`RUNTIMES`) picks another: ``onnx-int8`` is the
    dynamically quantised graph (faster, AUC 0.682 against 0.687, vectors not identical to the
    ones ``smalltalk_embed.yaml`` was calibrated with), ``torch`` the transformer itself,
    ``static-learned`` the table learned in context (:mod:`governor.overlays.embed.learned_table`).
    """
    runtime = os.environ.get("GOVERNOR_EMBED_RUNTIME", "").strip()
    if runtime and runtime not in RUNTIMES:
        raise ConfigError(
            f"GOVERNOR_EMBED_RUNTIME: expected one of {', '.join(RUNTIMES)}, found {runtime!r}"
        )
    if runtime == "static-learned":
        return learned_table.learned_embed()
    if runtime == "torch" or (not runtime and not onnx_graph.onnx_available()):
        return minilm.torch_embed()
    return minilm.onnx_embed(quantised=runtime == "onnx-int8")
