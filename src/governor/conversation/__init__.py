"""Conversation under an overlay observer: the small-talk observer and what it is built from.

:func:`~governor.conversation.small_talk.small_talk_observer` builds an
:class:`~governor.observer.Observer` from overlays (with the paper's seeded leniency), template or
observer-model feedback, the :class:`~governor.conversation.fallbacks.SmallTalkFallback` moves and
a preference for the admissible reply nearest a draw from the human reference
(:mod:`.preference`); :class:`~governor.conversation.llm_policy.LLMChatPolicy` is a chat model as
base policy; :class:`~governor.conversation.chat.ChatSession` runs a conversation turn by turn.
Imports the core loop, the overlays and the backends.
"""
