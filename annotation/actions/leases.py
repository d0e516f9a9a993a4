"""Leases: handing annotators their next item, giving items back, reclaiming expired leases."""
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from benchmarks.models import Item, Task
from core import sql
from core.errors import ActionError, Code

from ..models import (
    HOLDS_PERSON,
    HOLDS_SLOT,
    WORKER_ROLES,
    Assignment,
    Batch,
    BatchItem,
    BatchState,
    Campaign,
    CampaignSettings,
    EventKind,
    ItemStatus,
    LeaseStatus,
    Role,
)
from ..selectors import LEASE_RELATIONS, live_lease_and_first_batch
from ._common import FIRST_LEASE, MAX_COMMENT, _transition, current_settings, forbidden, record_event


@dataclass
class Lease:
    assignment: Assignment
    resumed: bool


def _start_batch(batch, *, actor, reason):
    """open -> annotating: the round runs under the campaign's current settings, now frozen for it."""
    settings = current_settings(batch.campaign)
    batch.settings = settings
    BatchItem.objects.filter(batch=batch).update(needed=settings.overlap)
    _transition(batch, BatchState.ANNOTATING, actor=actor, kind=EventKind.BATCH_STARTED, reason=reason,
                figures={"settings_version": settings.version, "overlap": settings.overlap})


def start_next_open_batch(campaign, actor):
    """Start the lowest-numbered open batch; False when none is left. Only that batch is ever locked, so
    that concurrent callers do not start one batch each."""
    open_batches = Batch.objects.filter(campaign=campaign, state=BatchState.OPEN).order_by("number")
    first = open_batches.values_list("pk", flat=True).first()
    if first is None:
        return False
    batch = Batch.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=first)
    if batch.state == BatchState.OPEN:
        _start_batch(batch, actor=actor, reason=FIRST_LEASE)
    return True


@cache
def _free_batch_item_sql():
    return (f"SELECT {sql.columns(BatchItem, 'bi')}, (SELECT a.slot FROM annotation_assignment a "
            f"WHERE a.batch_item_id = bi.id AND a.round = b.round AND a.status IN ({sql.literals(HOLDS_SLOT)}) "
            "ORDER BY 1 DESC LIMIT 1), "
            f"{sql.columns(Batch, 'b')}, {sql.columns(CampaignSettings, 's')}, {sql.columns(Item, 'i')}, "
            f"{sql.columns(Task, 't')} "
            "FROM annotation_batchitem bi INNER JOIN annotation_batch b ON bi.batch_id = b.id "
            "LEFT OUTER JOIN annotation_campaignsettings s ON b.settings_id = s.id "
            "INNER JOIN benchmarks_item i ON bi.item_id = i.id INNER JOIN benchmarks_task t ON i.task_id = t.id "
            f"WHERE b.state = %s AND bi.batch_id = %s AND bi.status = {sql.literals([ItemStatus.PENDING])} "
            "AND bi.taken < bi.needed AND NOT EXISTS(SELECT 1 FROM annotation_assignment a WHERE a.annotator_id = %s "
            f"AND a.batch_item_id = bi.id AND a.round = b.round AND a.status IN ({sql.literals(HOLDS_PERSON)}) LIMIT "
            "1) ORDER BY bi.position LIMIT 1" + sql.lock("FOR UPDATE OF bi SKIP LOCKED"))


def _free_batch_item(batch_id, annotator):
    """Lock the first item of a batch being annotated that still needs a label this round and that this
    annotator has not had; items others hold locked are skipped, not waited for. The scan stays on the
    partial index of pending items, in position order. The item comes with its batch, settings and task
    (what a lease shows), and with the highest slot held this round (see _slot)."""
    row = sql.fetch_one(_free_batch_item_sql(), sql.params(BatchState.ANNOTATING, batch_id, annotator.pk))
    if row is None:
        return None
    batch_item, at = sql.instance(BatchItem, row)
    batch_item.top_slot = row[at]
    batch, at = sql.instance(Batch, row, at + 1)
    batch.settings, at = sql.instance(CampaignSettings, row, at)
    item, at = sql.instance(Item, row, at)
    item.task, _ = sql.instance(Task, row, at)
    batch_item.batch, batch_item.item = batch, item
    return batch_item


def _lock_free_batch_item(campaign, annotator, first_batch=None):
    """_free_batch_item over the campaign's batches being annotated, lowest number first (`first_batch`, the
    lowest when the caller knows it, is tried without listing them)."""
    if first_batch is not None:
        found = _free_batch_item(first_batch, annotator)
        if found:
            return found
    batches = Batch.objects.filter(campaign=campaign, state=BatchState.ANNOTATING).exclude(pk=first_batch)
    for batch_id in batches.order_by("number").values_list("pk", flat=True):
        found = _free_batch_item(batch_id, annotator)
        if found:
            return found
    return None


def _slot(batch_item):
    """The lowest free slot of a locked batch item. `taken` counts the slots held, so when the highest one
    held is `taken` they are 1..taken and the next is taken + 1; otherwise (a lease was given back) they
    are read. The slot constraint stops a wrong guess (see lease_next_item)."""
    if (batch_item.top_slot or 0) == batch_item.taken:
        return batch_item.taken + 1
    used = set(Assignment.objects.filter(batch_item=batch_item, round=batch_item.batch.round, status__in=HOLDS_SLOT)
               .values_list("slot", flat=True))
    return min(slot for slot in range(1, batch_item.needed + 1) if slot not in used)


def _lease(batch_item, annotator, now):
    """Hand one slot of a locked batch item to an annotator."""
    batch, settings = batch_item.batch, batch_item.batch.settings
    assignment = sql.insert(Assignment(
        campaign_id=batch_item.campaign_id, batch_item=batch_item, item=batch_item.item, annotator=annotator,
        round=batch.round, slot=_slot(batch_item), settings=settings, served_at=now,
        expires_at=now + timedelta(minutes=settings.lease_minutes),
        inclusion_probability=batch_item.inclusion_probability))
    sql.execute("UPDATE annotation_batchitem SET taken = taken + 1 WHERE id = %s", [batch_item.pk])
    return assignment


def lease_next_item(campaign, *, annotator, now=None):
    """The annotator's next item: their live lease if they have one, else a slot of the first item that
    still needs labels this round and that they have not had. None when there is nothing for them.
    `campaign`: a Campaign or its id. The assignment comes with what a lease shows loaded
    (selectors.LEASE_RELATIONS)."""
    now = now or timezone.now()
    for attempt in range(3):
        try:
            with transaction.atomic():
                return _lease_next_item(campaign, annotator, now)
        except IntegrityError:
            # A constraint caught what the locks did not (a slot guessed from a stale look): look again.
            if attempt == 2:
                raise
    return None


@cache
def _lock_membership_sql():
    return ("SELECT m.role, c.worker_role FROM annotation_membership m INNER JOIN annotation_campaign c "
            "ON m.campaign_id = c.id WHERE m.active AND m.campaign_id = %s AND m.user_id = %s "
            f"AND m.role IN ({sql.marks(WORKER_ROLES)}) ORDER BY m.id" + sql.lock("FOR UPDATE OF m"))


def _lease_next_item(campaign, annotator, now):
    # One live lease per person per campaign: the same person's concurrent calls wait here for each other (their
    # membership rows in a labelling role, locked in id order before any batch item), so the second one finds
    # the first one's lease. The same statement reads the campaign's worker role, the role that labels. What comes
    # after the lock is read in the next statement: a subquery of the locking statement would see the database as it
    # was before the wait.
    campaign_id = getattr(campaign, "pk", campaign)
    rows = sql.fetch_all(_lock_membership_sql(), sql.params(campaign_id, annotator.pk, *WORKER_ROLES))
    if not any(role == worker_role for role, worker_role in rows):
        worker_role = Campaign.objects.filter(pk=campaign_id).values_list("worker_role", flat=True).first()
        raise forbidden({worker_role or Role.ANNOTATOR}, "take items")
    live, first_batch = live_lease_and_first_batch(campaign_id, annotator, now)
    if live:
        return Lease(Assignment.objects.select_related(*LEASE_RELATIONS).get(pk=live), resumed=True)
    for _ in range(6):
        batch_item = _lock_free_batch_item(campaign, annotator, first_batch)
        if batch_item is not None:
            return Lease(_lease(batch_item, annotator, now), resumed=False)
        if not (start_next_open_batch(campaign, annotator) or reclaim_expired_leases(campaign=campaign, now=now)):
            return None
        first_batch = None
    return None


def _give_back(assignment, status, now):
    assignment.status, assignment.closed_at = status, now
    assignment.save(update_fields=["status", "closed_at"])
    BatchItem.objects.filter(pk=assignment.batch_item_id).update(taken=F("taken") - 1)


def release_assignment(assignment, *, annotator, now=None, reason=""):
    """The annotator gives the item back unlabelled (skip); it goes to someone else, never back to them.
    The reason, when given, is kept in the campaign's history."""
    now = now or timezone.now()
    with transaction.atomic():
        BatchItem.objects.select_for_update().get(pk=assignment.batch_item_id)
        assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if assignment.annotator_id != annotator.pk:
            raise ActionError(Code.NOT_YOUR_ASSIGNMENT, gettext("This item is leased to someone else."))
        if assignment.status != LeaseStatus.LEASED:
            raise ActionError(Code.LEASE_CLOSED, gettext("This lease is already %(status)s.")
                              % {"status": assignment.status})
        _give_back(assignment, LeaseStatus.RELEASED, now)
        if reason.strip():
            record_event(assignment.campaign_id, EventKind.ITEM_SKIPPED, actor=annotator,
                         reason=reason.strip()[:MAX_COMMENT],
                         figures={"item": assignment.item_id, "round": assignment.round})
    return assignment


def reclaim_expired_leases(*, campaign=None, now=None, limit=5000):
    """Expire leases past their time so an idle annotator never strands items. Returns how many.

    Each item is handled in its own short transaction and skipped while someone holds it (a submit in
    flight wins: it is still within the lease or the annotator gets the benefit of the doubt)."""
    now = now or timezone.now()
    stale = Assignment.objects.filter(status=LeaseStatus.LEASED, expires_at__lte=now)
    if campaign is not None:
        stale = stale.filter(campaign=campaign)
    reclaimed = Counter()
    rows = stale.order_by("expires_at").values_list("pk", "batch_item_id", "campaign_id")[:limit]
    for pk, batch_item_id, campaign_id in rows:
        with transaction.atomic():
            busy = BatchItem.objects.select_for_update(skip_locked=True).filter(pk=batch_item_id).values_list("pk")
            if busy.first() is None:
                continue
            assignment = Assignment.objects.select_for_update().get(pk=pk)
            if assignment.status == LeaseStatus.LEASED and assignment.expires_at <= now:
                _give_back(assignment, LeaseStatus.EXPIRED, now)
                reclaimed[campaign_id] += 1
    for campaign_id, count in reclaimed.items():
        record_event(campaign_id, EventKind.LEASES_RECLAIMED, figures={"count": count})
    return sum(reclaimed.values())
