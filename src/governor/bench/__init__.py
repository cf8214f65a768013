"""Runtime benchmarks: what the runtime library costs, measured without any world.

``governor bench serve`` (:mod:`.service`, the latency the guard service adds), ``bench store``
(:mod:`.store_cycle`, one session-store cycle), ``bench ltl-speed`` (:mod:`.ltl_speed`, the LTL
monitors' step time), :mod:`.ltl_people` (``bench ltl-translate --file``: the English-to-LTL
translator on any set of sentences with gold formulas, over a domain file; the shipped pattern
sets, scored with the household's verbs, stay in :mod:`governor.papers.ltl_translate`) and
:mod:`.feature_speed` (the offline overlay features' time per reply). A layer above the runtime library: it imports the runtime only, never a world, the
papers' reproductions (:mod:`governor.papers`) or the CLI; the runtime never imports it. A bench
that needs a world lives with that world or in :mod:`governor.papers`.
"""
