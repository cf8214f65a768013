"""Integrations of governor into agent frameworks: each module puts a policy's checks where a
framework runs tools (AgentDojo's pipeline, ...).

Integrations sit on top of the ``Guard`` facade like the CLI: each is an optional extra
(``pip install 'governor[agentdojo]'``), imported only when used, and may import the runtime
library and its framework; the runtime never imports them.
"""
