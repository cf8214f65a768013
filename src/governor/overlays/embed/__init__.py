"""The local embedding of the embedding features: all-MiniLM-L6-v2 from the ``[embed]`` extra,
run by torch or ONNX Runtime, or read from a static table.

- :mod:`.minilm`: the model's files and checks (:data:`~.minilm.MODEL_SHA256`) and its encoders,
  :class:`~.minilm.LocalEmbed` (torch) and :class:`~.minilm.OnnxEmbed`;
- :mod:`.onnx_graph`: the graph exported once to ONNX (fp32 and int8), cached, checked, run;
- :mod:`.static`: :class:`~.static.StaticEmbed`, a table distilled one word piece at a time;
- :mod:`.learned_table`: :class:`~.learned_table.LearnedEmbed`, a table learned from the
  transformer in context;
- :mod:`.runtime`: :func:`~.runtime.local_embed`, which of them the observer uses
  (``$GOVERNOR_EMBED_RUNTIME``). It lives apart from the encoders so that the encoders' modules do
  not import the tables built from them.

The package's ``__init__`` imports nothing (torch, transformers and onnxruntime load on first
use). Imports the error tree, the overlays' corpora and text helpers and the data folder; nothing
of the loop or the worlds.
"""
