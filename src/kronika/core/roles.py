"""The assistant named by its role in a question: "What did the assistant suggest?".

A conversation's turns carry their speaker as a field (``assistant`` for the agent's
own replies, :data:`kronika.core.model.ASSISTANT_SPEAKER`). A question naming that
speaker by its role asks for what the assistant said, and recall prefers its turns
(:func:`kronika.core.fusion.named_speakers`). People ask in their own language, so the
role is read in English, Polish, Spanish and Ukrainian, singular, in each of its cases
(folded, casefolded), as :data:`kronika.core.owner.USER_FORMS` reads "the user".

"You" is not read so: a question to the agent says "you" of the agent and of anyone it
quotes ("what did you tell me about…" and "how old are you, Caroline?").
"""

from __future__ import annotations

from kronika.core.text import folded_words

ASSISTANT_FORMS = frozenset(
    folded_words(
        "assistant "
        "asystent asystenta asystentowi asystentem asystencie "
        "asystentka asystentki asystentce asystentkę asystentką "
        "asistente asistenta "
        "асистент асистента асистентові асистенту асистентом асистенті "
        "асистентка асистентки асистентці асистентку асистенткою "
        "помічник помічника помічникові помічнику помічником"
    )
)
"""The word for "the assistant" in English, Polish, Spanish and Ukrainian (``помічник``
too), singular, in each of its cases."""


def names_the_assistant(query: str) -> bool:
    """Whether ``query`` names the assistant by its role (:data:`ASSISTANT_FORMS`)."""
    return any(word in ASSISTANT_FORMS for word in folded_words(query))


__all__ = ["ASSISTANT_FORMS", "names_the_assistant"]
