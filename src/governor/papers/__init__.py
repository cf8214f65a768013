"""The papers' cross-world reproductions and the offline demo built from them.

``governor bench reguard`` (:mod:`.reguard`, the computing, and :mod:`.reguard_report`, the
tables and the command: the ReGuard paper's tables 1 to 4 over driving, commerce and the backseat
driver), ``governor bench models`` (:mod:`.models`: every LLM path of governor on one model, run
through the worlds' benchmarks), ``governor bench ltl-translate`` (:mod:`.ltl_translate`: the
Safety Chip's English-to-LTL pattern families, scored with the household's verbs), ``governor
bench agentdojo`` (:mod:`.agentdojo_bench`: governor as a defense on AgentDojo's suites, scored by
AgentDojo's own functions; it imports the optional ``agentdojo`` package only when run) and
``governor demo`` (:mod:`.demo`). Sits on top beside the
worlds: it may import the worlds, the runtime benchmarks (:mod:`governor.bench`), the
integrations (:mod:`governor.integrations`) and the runtime library, never the CLI; nothing but
the CLI imports it.
"""
