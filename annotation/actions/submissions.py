"""Submissions and outcomes: an annotator's answers stored, an item settled once its round's labels are in, and
disagreements decided by experts."""
import math
from dataclasses import dataclass
from functools import cache

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from benchmarks.formschema import excluding_values, question, validate_answers
from benchmarks.models import Item, Task
from core import sql
from core.errors import ActionError, Code

from ..models import (
    FINAL_STATUSES,
    WORKER_ROLES,
    Annotation,
    Assignment,
    Batch,
    BatchItem,
    Campaign,
    CampaignSettings,
    Disagreement,
    DisagreementStatus,
    EventKind,
    ItemStatus,
    LeaseStatus,
)
from ..policy import RESOLVE
from ..rules import item_outcome
from ..selectors import seconds_until_submit_allowed
from ._common import _check_value, forbidden, record_event, require_role
from .batches import auto_hand_in


@dataclass
class Submission:
    annotation: Annotation
    replayed: bool


def _replay(client_submission_id, annotator, assignment_id):
    earlier = Annotation.objects.filter(client_submission_id=client_submission_id).first()
    if earlier is None:
        return None
    if earlier.annotator_id != annotator.pk or earlier.assignment_id != assignment_id:
        raise ActionError(Code.SUBMISSION_ID_REUSED, gettext("This submission id was already used for another "
                                                           "submission."))
    return Submission(earlier, replayed=True)


def _checked_answers(form, answers, item):
    """The question keys whose answers exclude the item; invalid_answers with errors per question otherwise."""
    try:
        return validate_answers(form, answers, item.fields, len(item.dialogue))
    except ValidationError as error:
        raise ActionError(Code.INVALID_ANSWERS, gettext("Some answers are not valid."),
                          errors=error.message_dict) from None


@cache
def _locked_lease_sql():
    member = ("EXISTS(SELECT 1 FROM annotation_membership m WHERE m.active AND m.campaign_id = a.campaign_id "
              "AND m.role = %s AND m.user_id = %s LIMIT 1)")
    return (f"SELECT {sql.columns(Assignment, 'a')}, {', '.join([member] * len(WORKER_ROLES))}, "
            f"{sql.columns(Campaign, 'c')}, {sql.columns(BatchItem, 'bi')}, {sql.columns(Item, 'i')}, "
            f"{sql.columns(Task, 't')}, {sql.columns(CampaignSettings, 's')} "
            "FROM annotation_assignment a INNER JOIN annotation_campaign c ON a.campaign_id = c.id "
            "INNER JOIN annotation_batchitem bi ON a.batch_item_id = bi.id "
            "INNER JOIN benchmarks_item i ON a.item_id = i.id INNER JOIN benchmarks_task t ON i.task_id = t.id "
            "INNER JOIN annotation_campaignsettings s ON a.settings_id = s.id WHERE a.id = %s"
            + sql.lock("FOR UPDATE OF bi"))


def _locked_lease(assignment_id, annotator):
    """The assignment with its batch item locked (every writer of an item's assignments locks the item
    first, so the lock keeps the assignment still too), its settings, item, task and campaign, and whether
    `annotator` is an active member in each role that labels (as_<role>). One statement; None when there is
    no such assignment."""
    member = [value for role in WORKER_ROLES for value in (role, annotator.pk)]
    row = sql.fetch_one(_locked_lease_sql(), sql.params(*member, assignment_id))
    if row is None:
        return None
    assignment, at = sql.instance(Assignment, row)
    for role in WORKER_ROLES:
        setattr(assignment, f"as_{role}", bool(row[at]))
        at += 1
    assignment.campaign, at = sql.instance(Campaign, row, at)
    assignment.batch_item, at = sql.instance(BatchItem, row, at)
    assignment.item, at = sql.instance(Item, row, at)
    assignment.item.task, at = sql.instance(Task, row, at)
    assignment.settings, _ = sql.instance(CampaignSettings, row, at)
    return assignment


def _closed(assignment, annotator, client_submission_id):
    """Why a lease that is not live cannot take a submission (or the first result of a retry)."""
    if assignment.status == LeaseStatus.SUBMITTED:
        # A retry of the submission that closed this lease gets its result back.
        replay = _replay(client_submission_id, annotator, assignment.pk)
        if replay:
            return replay
        raise ActionError(Code.ALREADY_SUBMITTED, gettext("This item was already submitted."),
                          annotation=assignment.annotation.pk)
    raise ActionError(Code.LEASE_CLOSED, gettext("This lease is %(status)s; ask for the next item.")
                      % {"status": assignment.status})


def _given_on(item_id, sent_for):
    """A label is stored only on the item it was given on: `sent_for` (when the page names it) must be
    `item_id`, the item the lease, answer or sample entry it was sent to is about."""
    if sent_for is not None and sent_for != item_id:
        raise ActionError(Code.WRONG_ITEM, gettext("These answers were given on another item than the one they were "
                                                   "sent for; nothing was saved. Reload the page."))


def submit_annotation(assignment, *, annotator, answers, client_submission_id, now=None, item_id=None):
    """Store one annotator's answers for a leased item (`item_id`: the item they were given on).

    Refused while the minimum reading time has not passed (the lease stays). A retry with the same
    client_submission_id gets the first result back instead of a second row.
    """
    now = now or timezone.now()
    assignment_id = getattr(assignment, "pk", assignment)
    try:
        with transaction.atomic():
            assignment = _locked_lease(assignment_id, annotator)
            if assignment is None:
                raise ActionError(Code.NOT_FOUND, gettext("No such assignment."))
            batch_item, campaign, settings = assignment.batch_item, assignment.campaign, assignment.settings
            if assignment.annotator_id != annotator.pk:
                raise ActionError(Code.NOT_YOUR_ASSIGNMENT, gettext("This item is leased to someone else."))
            if not getattr(assignment, f"as_{campaign.worker_role}"):
                raise forbidden({campaign.worker_role}, "submit labels")
            _given_on(assignment.item_id, item_id)
            if assignment.status != LeaseStatus.LEASED:
                return _closed(assignment, annotator, client_submission_id)
            if now >= assignment.expires_at:
                late = math.ceil((now - assignment.expires_at).total_seconds())
                raise ActionError(Code.LEASE_EXPIRED, gettext("Your time on this item ran out %(late)s s ago (an item "
                                                              "is kept for you %(minutes)s min); this answer was not "
                                                              "saved.") % {"late": late,
                                                                           "minutes": settings.lease_minutes},
                                  seconds_late=late, lease_minutes=settings.lease_minutes)
            waited = (now - assignment.served_at).total_seconds()
            left = seconds_until_submit_allowed(assignment, now)
            if left > 0:
                raise ActionError(Code.TOO_EARLY, gettext("Read the dialogue for %(left)s more seconds before "
                                                          "answering.")
                                  % {"left": f"{left:g}"},
                                  seconds_left=left, min_reading_seconds=settings.min_reading_seconds)
            item, form = assignment.item, assignment.item.task.form
            excluded_by = _checked_answers(form, answers, item)
            # Closed only if still live: the status read above may predate the lock (the lock keeps the row
            # from changing from here on).
            if not sql.execute("UPDATE annotation_assignment SET status = %s, closed_at = %s WHERE id = %s AND status "
                               "= %s",
                               sql.params(LeaseStatus.SUBMITTED, now,
                                          assignment.pk, LeaseStatus.LEASED)):
                assignment.refresh_from_db(fields=["status"])
                return _closed(assignment, annotator, client_submission_id)
            assignment.status, assignment.closed_at = LeaseStatus.SUBMITTED, now
            annotation = sql.insert(Annotation(
                campaign=campaign, batch_item=batch_item, item=item, annotator=annotator,
                assignment=assignment, round=assignment.round, slot=assignment.slot, settings=settings,
                answers=answers, value=answers.get(form["primary"]), excluded=bool(excluded_by),
                excluded_by=sorted(excluded_by), dwell_seconds=waited, client_submission_id=client_submission_id,
                submitted_at=now))
            _settle(batch_item, campaign, settings, assignment.round)
    except IntegrityError:
        replay = _replay(client_submission_id, annotator, assignment_id)
        if replay:
            return replay
        raise
    if batch_item.status in FINAL_STATUSES:
        auto_hand_in(batch_item.batch_id, actor=annotator)
    return Submission(annotation, replayed=False)


def round_outcome(batch_item, campaign, settings, round_, values, excluded):
    """An item's outcome once all of a round's labels are in: rules.item_outcome under the round's settings.
    Labels submitted here and ratings imported from files (annotation.importers) are settled by it alike."""
    return item_outcome(values, excluded, protocol=campaign.protocol, policy=settings.disagreement_policy,
                        tie_rule=settings.tie_rule, seed=f"{settings.seed}:{batch_item.pk}:{round_}",
                        extra_used=batch_item.needed - settings.overlap, max_extra=settings.max_extra_annotators)


def _settle(batch_item, campaign, settings, round_):
    """Once all of the round's labels of a (locked) item are in, apply agreement and the policy."""
    labels = [(name, sql.loaded(Annotation, "value", value), excluded) for name, value, excluded in sql.fetch_all(
        "SELECT u.username, a.value, a.excluded FROM annotation_annotation a INNER JOIN auth_user u "
        "ON a.annotator_id = u.id WHERE a.batch_item_id = %s AND a.round = %s ORDER BY a.submitted_at, a.id",
        [batch_item.pk, round_])]
    if len(labels) < batch_item.needed:
        return
    outcome = round_outcome(batch_item, campaign, settings, round_, [v for _, v, _ in labels],
                            [e for _, _, e in labels])
    if outcome.add_slot:
        batch_item.needed += 1
    batch_item.status, batch_item.final_value, batch_item.final_method = outcome.status, outcome.value, outcome.method
    sql.execute("UPDATE annotation_batchitem SET needed = %s, status = %s, final_value = %s, final_method = %s "
                "WHERE id = %s", sql.params(batch_item.needed, batch_item.status,
                                            sql.prepared(BatchItem, "final_value", batch_item.final_value),
                                            batch_item.final_method, batch_item.pk))
    if outcome.disagreement:
        resolved = outcome.status in FINAL_STATUSES
        Disagreement.objects.update_or_create(
            batch_item=batch_item, round=round_,
            defaults={"campaign": campaign, "settings": settings,
                      "labels": [{"annotator": name, "value": value} for name, value, _ in labels],
                      "status": DisagreementStatus.RESOLVED if resolved else DisagreementStatus.OPEN,
                      "method": outcome.method if resolved or outcome.add_slot else "",
                      "resolved_value": outcome.value if resolved else None,
                      "resolved_at": timezone.now() if resolved else None})


def resolve_disagreement(disagreement, *, actor, value, reason=""):
    """An expert or trainer decides an item's label (adjudication); their own labels disqualify them."""
    require_role(actor, disagreement.campaign, RESOLVE, "resolve disagreements")
    with transaction.atomic():
        batch_item = (BatchItem.objects.select_for_update(of=("self",)).select_related("item__task")
                      .get(pk=disagreement.batch_item_id))
        disagreement = Disagreement.objects.select_for_update().get(pk=disagreement.pk)
        if disagreement.status != DisagreementStatus.OPEN:
            raise ActionError(Code.ALREADY_RESOLVED, gettext("This disagreement is already resolved."),
                              resolved_value=disagreement.resolved_value)
        if batch_item.status != ItemStatus.DISAGREEMENT:
            # extra_annotator: the item is still waiting for the extra label it was given.
            raise ActionError(Code.AWAITING_LABELS, gettext("This item is waiting for more labels; decide it once "
                                                            "they are in."))
        if Annotation.objects.filter(batch_item=batch_item, round=disagreement.round, annotator=actor).exists():
            raise ActionError(Code.OWN_WORK, gettext("You labelled this item; someone else must decide it."))
        _check_value(batch_item.item, value)
        form = batch_item.item.task.form
        excluding = excluding_values(question(form, form["primary"]))
        disagreement.status, disagreement.method = DisagreementStatus.RESOLVED, "adjudicated"
        disagreement.resolved_value, disagreement.resolved_by = value, actor
        disagreement.reason, disagreement.resolved_at = reason, timezone.now()
        disagreement.save()
        batch_item.status = ItemStatus.EXCLUDED if value in excluding else ItemStatus.LABELLED
        batch_item.final_value, batch_item.final_method = value, "adjudicated"
        batch_item.save(update_fields=["status", "final_value", "final_method"])
        batch = Batch.objects.get(pk=batch_item.batch_id)
        record_event(disagreement.campaign_id, EventKind.DISAGREEMENT_RESOLVED, batch=batch, actor=actor, reason=reason,
                     figures={"item": batch_item.item.external_id, "labels": disagreement.labels, "value": value})
    auto_hand_in(batch_item.batch_id, actor=actor)
    return disagreement
