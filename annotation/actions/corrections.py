"""Annotators' own corrections and flags."""
import math
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from core.errors import ActionError, Code

from ..models import (
    FINAL_STATUSES,
    Annotation,
    Batch,
    BatchItem,
    BatchState,
    Disagreement,
    EventKind,
    ItemFlag,
    ItemStatus,
)
from ..selectors import labeller_handed_in_state
from ._common import MAX_COMMENT, record_event, require_role
from .batches import auto_hand_in, hand_in_requested
from .submissions import _checked_answers, _given_on, _settle


def amend_annotation(annotation, *, annotator, answers, now=None, item_id=None):
    """An annotator changes their own last answer while its batch round is still being annotated (`item_id`:
    the item the change was made on). The first answers are kept in the event.

    Whether the change is taken, and what it answers, never depends on anyone else's label: otherwise an
    annotator could try values until the answer showed that they matched their peer. Before any other label
    of the round is in, the item's outcome is worked out again from the labels. Once another label is in, a
    disagreement of the round is never closed (nor decided again) by the change: it stays as it stands for the
    experts, and its record marks the label as changed after the peer's label (`amended_after_peer`, with the
    first value), as does the event; labels that agreed and now differ open a disagreement marked alike."""
    now = now or timezone.now()
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=annotation.batch_item.batch_id)
        batch_item = BatchItem.objects.select_for_update().select_related("item__task").get(pk=annotation.batch_item_id)
        annotation = Annotation.objects.select_for_update(of=("self",)).select_related("settings").get(pk=annotation.pk)
        if annotation.annotator_id != annotator.pk:
            raise ActionError(Code.NOT_YOUR_ASSIGNMENT, gettext("Only the annotator may change their answer."))
        _given_on(annotation.item_id, item_id)
        require_role(annotator, annotation.campaign, {annotation.campaign.worker_role}, "change labels")
        last = (Annotation.objects.filter(campaign_id=annotation.campaign_id, annotator=annotator)
                .order_by("-submitted_at", "-id").values_list("pk", flat=True).first())
        if last != annotation.pk:
            raise ActionError(Code.NOT_CHANGEABLE, gettext("Only your last answer can be changed."))
        # A hand-in a labeller asked for reads to them as made (actions.batches.hand_in_batch): no change after it.
        state = (labeller_handed_in_state(batch.campaign.has_qc) if batch.state == BatchState.ANNOTATING
                 and hand_in_requested(batch) else batch.state)
        if state != BatchState.ANNOTATING or annotation.round != batch.round or annotation.superseded_at:
            raise ActionError(Code.NOT_CHANGEABLE, gettext("Batch %(number)s is %(state)s; answers can be changed only "
                                                           "until it is handed in.")
                              % {"number": batch.number, "state": state.replace("_", " ")})
        settings = annotation.settings or batch.settings
        item, form = batch_item.item, batch_item.item.task.form
        excluded_by = _checked_answers(form, answers, item)
        after_peer = (Annotation.objects.filter(batch_item=batch_item, round=batch.round)
                      .exclude(annotator=annotator).exists())
        disagreement = (Disagreement.objects.select_for_update().filter(batch_item=batch_item, round=batch.round)
                        .first())
        before, before_value = annotation.answers, annotation.value
        annotation.answers, annotation.value = answers, answers.get(form["primary"])
        annotation.excluded, annotation.excluded_by = bool(excluded_by), sorted(excluded_by)
        annotation.save(update_fields=["answers", "value", "excluded", "excluded_by"])
        if not (after_peer and disagreement is not None):
            batch_item.status, batch_item.final_value, batch_item.final_method = ItemStatus.PENDING, None, ""
            batch_item.save(update_fields=["status", "final_value", "final_method"])
            _settle(batch_item, batch.campaign, settings, batch.round)
            disagreement = (Disagreement.objects.filter(batch_item=batch_item, round=batch.round).first()
                            if after_peer else None)
        if disagreement is not None:
            _mark_amended(disagreement, annotator, before_value, annotation.value, now)
        record_event(batch.campaign_id, EventKind.LABEL_CHANGED, batch=batch, actor=annotator,
                     figures={"item": item.external_id, "annotation": annotation.pk, "before": before,
                              "after": answers, "after_peer": after_peer,
                              **({"disagreement": disagreement.pk} if disagreement is not None else {})})
    if batch_item.status in FINAL_STATUSES:
        auto_hand_in(batch.pk, actor=annotator)
    return annotation


def _mark_amended(disagreement, annotator, first_value, value, now):
    """The disagreement's record of labels with `annotator`'s label changed after the peer's label was in: its
    value now, the value it had first, and when (the record keeps the first value of every change)."""
    labels, found = [], False
    for label in disagreement.labels or []:
        if label.get("annotator") == annotator.username:
            found = True
            label = {**label, "value": value, "amended_after_peer": True,
                     "first_value": label.get("first_value", first_value),
                     "amended_at": now.isoformat()}
        labels.append(label)
    if not found:
        labels.append({"annotator": annotator.username, "value": value, "amended_after_peer": True,
                       "first_value": first_value, "amended_at": now.isoformat()})
    disagreement.labels = labels
    disagreement.save(update_fields=["labels"])


def _check_flag_limits(assignment, actor):
    """At most FLAGS_PER_LEASE flags on one lease and FLAGS_PER_PERSON_PER_DAY by one person in 24 hours. The
    person's row is locked until the flag is written, so that flags sent at once are counted one by one."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    get_user_model().objects.select_for_update().filter(pk=actor.pk).first()
    on_lease = ItemFlag.objects.filter(author=actor, batch_item_id=assignment.batch_item_id, round=assignment.round)
    if on_lease.count() >= settings.FLAGS_PER_LEASE:
        raise ActionError(Code.TOO_MANY_FLAGS, gettext("This item already has %(count)s flags from you, the most one "
                                                       "lease may have; add to what you said in the last one.")
                          % {"count": settings.FLAGS_PER_LEASE})
    since = timezone.now() - timedelta(days=1)
    today = ItemFlag.objects.filter(author=actor, created_at__gte=since).order_by("created_at")
    if (count := today.count()) >= settings.FLAGS_PER_PERSON_PER_DAY:
        oldest = today.values_list("created_at", flat=True)[count - settings.FLAGS_PER_PERSON_PER_DAY]
        wait = max(1, math.ceil((oldest - since).total_seconds()))
        raise ActionError(Code.TOO_MANY_FLAGS, gettext("You have sent %(count)s flags in the last 24 hours, the most "
                                                       "one person may send; tell your trainer what is wrong "
                                                       "instead.") % {"count": count},
                          retry_after=wait)


def flag_item(assignment, *, actor, comment):
    """An annotator flags the item of one of their leases (live or done) with a comment for the trainers."""
    comment = (comment or "").strip()
    if not comment:
        raise ActionError(Code.REASON_REQUIRED, gettext("Say what is wrong with the item."))
    if len(comment) > MAX_COMMENT:
        raise ActionError(Code.INVALID_VALUE, gettext("comment: at most %(most)s characters, got %(got)s.")
                          % {"most": MAX_COMMENT, "got": len(comment)})
    if assignment.annotator_id != actor.pk:
        raise ActionError(Code.NOT_YOUR_ASSIGNMENT, gettext("You can flag only items you were given."))
    require_role(actor, assignment.campaign, {assignment.campaign.worker_role}, "flag items")
    with transaction.atomic():
        _check_flag_limits(assignment, actor)
        flag = ItemFlag.objects.create(campaign_id=assignment.campaign_id, batch_item_id=assignment.batch_item_id,
                                       item_id=assignment.item_id, round=assignment.round, author=actor,
                                       comment=comment)
        batch = Batch.objects.get(pk=assignment.batch_item.batch_id)
        record_event(assignment.campaign_id, EventKind.ITEM_FLAGGED, batch=batch, actor=actor, reason=comment,
                     figures={"item": assignment.item.external_id, "flag": flag.pk})
    return flag
