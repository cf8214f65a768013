"""Integrations: governor where agents already live, each a thin layer over the ``Guard`` facade.

- :mod:`.tool_judge`: the one thing they share, judging a tool call before it runs against the
  session's calls and results so far and recording it once allowed (check, then commit), with no
  model behind the guard;
- :mod:`.mcp_gateway`: an MCP gateway between an MCP client and an MCP server (``governor mcp``);
- :mod:`.openai_agents`: tool input and output guardrails for the OpenAI Agents SDK;
- :mod:`.langchain`: agent middleware for LangChain 1.x;
- :mod:`.agentdojo`: a tools executor for AgentDojo's pipeline that judges each call before it
  runs and returns a refusal as the call's result.

Each framework is an optional extra (``mcp``, ``openai-agents``, ``langchain``, ``agentdojo``) imported only
when its module is: ``import governor`` imports none of them, and the runtime library never
imports this package (like the CLI, it sits on top). These modules import the guard's public
facade, the backends' interface and the error tree, and their own framework.
"""
