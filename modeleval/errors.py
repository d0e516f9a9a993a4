"""Model evaluation's refusal: below the actions and the mode families, which both raise it."""
from core.errors import ActionError


class RunError(ActionError):
    """A refused model-evaluation action: a code (core.errors.Code) and a message for people."""
