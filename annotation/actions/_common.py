"""Helpers every area of the annotation actions shares: roles, events, the batch state machine, settings."""
from decimal import Decimal

from django.utils.translation import gettext, gettext_noop

from benchmarks.formschema import is_one_of, primary_values
from core.errors import ActionError, Code

from ..models import Batch, BatchState, Event, EventKind, Policy, Protocol, QCReview
from ..policy import refusal, roles_of

TRANSITIONS = {
    BatchState.OPEN: {BatchState.ANNOTATING},
    # A protocol without QC (Campaign.has_qc) completes a finished batch: annotating -> accepted.
    BatchState.ANNOTATING: {BatchState.HANDED_IN, BatchState.ACCEPTED},
    BatchState.HANDED_IN: {BatchState.IN_REVIEW},
    BatchState.IN_REVIEW: {BatchState.ACCEPTED, BatchState.REJECTED},
    BatchState.REJECTED: {BatchState.ANNOTATING},
    BatchState.ACCEPTED: set(),
}


PROTOCOL_DEFAULTS = {
    Protocol.PRODUCTION: {"overlap": 2},
    Protocol.HUMAN_BASELINE: {"overlap": 3, "items_per_task": 50},
    Protocol.GOLD_PANEL: {"overlap": 3, "disagreement_policy": Policy.MAJORITY, "tie_rule": "none"},
}


def forbidden(roles, what):
    return ActionError(Code.FORBIDDEN, refusal(roles, what))


def require_role(user, campaign, roles, what):
    if not roles_of(user, campaign) & set(roles):
        raise forbidden(roles, what)


def jsonable(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    return value


def record_event(campaign, kind, *, batch=None, actor=None, reason="", figures=None, from_state="", to_state=""):
    return Event.objects.create(campaign_id=getattr(campaign, "pk", campaign), batch=batch,
                                kind=EventKind(kind), from_state=from_state, to_state=to_state,
                                round=batch.round if batch else None,
                                actor=actor if actor and actor.is_authenticated else None, reason=reason,
                                figures=jsonable(figures or {}))


def _transition(batch, to_state, *, actor, kind, reason="", figures=None):
    """Move a locked batch along the state machine and record the event."""
    if to_state not in TRANSITIONS[batch.state]:
        raise wrong_state(batch, gettext("it cannot go to %(state)s") % {"state": to_state})
    from_state, batch.state = batch.state, to_state
    batch.save()
    return record_event(batch.campaign_id, kind, batch=batch, actor=actor, reason=reason, figures=figures,
                        from_state=from_state, to_state=to_state)


def wrong_state(batch, expected):
    return ActionError(Code.INVALID_TRANSITION, gettext("Batch %(number)s is %(state)s; %(expected)s.")
                       % {"number": batch.number, "state": batch.state, "expected": expected},
                       state=batch.state)


def current_settings(campaign):
    """The newest settings version, read fresh (a cached campaign.settings may be stale inside an action)."""
    return campaign.settings_versions.order_by("-version").first()


def _locked_batch(batch):
    return Batch.objects.select_for_update().get(pk=batch.pk)


def _review(batch):
    return QCReview.objects.select_for_update().filter(batch=batch, round=batch.round).first()


def _check_value(item, value):
    allowed = primary_values(item.task.form, item.fields)
    if allowed is not None and not is_one_of(value, allowed):
        raise ActionError(Code.INVALID_VALUE, gettext("Expected one of %(allowed)s for %(question)r, got %(value)r.")
                          % {"allowed": allowed, "question": item.task.form["primary"], "value": value},
                          allowed=allowed)


MAX_COMMENT = 2000

# The reasons the platform writes on events by itself, stored in English as written; the pages show them in the
# reader's language (a person's own reason is shown as they wrote it).
FIRST_LEASE = gettext_noop("first lease")
REJECTED_IN_QC = gettext_noop("rejected in QC")
HANDED_IN_BY_ITSELF = gettext_noop("handed in by itself: every item has its final label")
COMPLETE_BY_ITSELF = gettext_noop("complete by itself: every item has its final label; this protocol has no QC step")
RATINGS_IMPORTED = gettext_noop("ratings imported")
HANDED_IN_AS_REQUESTED = gettext_noop("handed in as its labeller asked, once every item had its final label")
COMPLETE_AS_REQUESTED = gettext_noop("complete as its labeller asked, once every item had its final label; this "
                                     "protocol has no QC step")
SYSTEM_REASONS = frozenset({FIRST_LEASE, REJECTED_IN_QC, HANDED_IN_BY_ITSELF, COMPLETE_BY_ITSELF, RATINGS_IMPORTED,
                            HANDED_IN_AS_REQUESTED, COMPLETE_AS_REQUESTED})
