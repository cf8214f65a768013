"""Conversation under the small-talk observer: base policies, users, the observer, commands.

- :func:`conversation_observer` assembles the observer (overlays, the paper's buffer with a
  seeded leniency, template or observer-model feedback, the :class:`SmallTalkFallback`, and a
  preference for the admissible reply nearest a draw from the human reference);
- base policies: :class:`LLMChatPolicy` (a chat model through a backend) and
  :class:`RetrievalResponder` (an offline stand-in that returns stored human turns; not a model);
- users: :class:`ReplayedUser` (held-out human openings, :func:`human_openings`) and
  :class:`LLMPersonaUser`;
- :class:`ChatSession` runs a conversation turn by turn; :func:`audit` judges a recorded one;
- :mod:`governor.conversation.commands` holds the `chat`, `audit` and `calibrate` commands.
"""

from governor.conversation.audit import audit, read_transcript
from governor.conversation.fallbacks import MOVES, Move, SmallTalkFallback
from governor.conversation.llm_policy import SYSTEM_PROMPT, LLMChatPolicy
from governor.conversation.metrics import likeness, mean_drift
from governor.conversation.observer import (
    LenientOverlayConstraint,
    ObserverModelFeedback,
    SmallTalkConfig,
    conversation_observer,
    unguarded,
)
from governor.conversation.preference import HumanLikeness, RankingArbiter
from governor.conversation.responder import RetrievalResponder
from governor.conversation.session import ChatSession, TurnResult
from governor.conversation.settings import ConversationSettings, load_settings
from governor.conversation.user_sim import (
    LLMPersonaUser,
    ReplayedUser,
    UserSimulator,
    human_openings,
)

__all__ = [
    "MOVES",
    "SYSTEM_PROMPT",
    "ChatSession",
    "ConversationSettings",
    "HumanLikeness",
    "LLMChatPolicy",
    "LLMPersonaUser",
    "LenientOverlayConstraint",
    "Move",
    "ObserverModelFeedback",
    "RankingArbiter",
    "ReplayedUser",
    "RetrievalResponder",
    "SmallTalkConfig",
    "SmallTalkFallback",
    "TurnResult",
    "UserSimulator",
    "audit",
    "conversation_observer",
    "human_openings",
    "likeness",
    "load_settings",
    "mean_drift",
    "read_transcript",
    "unguarded",
]
