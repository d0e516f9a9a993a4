"""Every write of the annotation app. Each action checks who may do it, locks what it must, writes, and
records an Event, in one transaction.

Lock order, everywhere: campaign, then batch, then batch item, then assignment. Leases lock batch items
with SKIP LOCKED so that concurrent annotators pass each other instead of queueing; on SQLite the
locks are no-ops and the immediate transactions of the settings serialise the writers instead.
"""
import math
import random
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from functools import cache

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from benchmarks.formschema import excluding_values, is_one_of, primary_values, question, validate_answers
from benchmarks.models import Benchmark, Item, Task
from benchmarks.permissions import staff_or_holder
from metrics import majority_vote, median_reading_seconds
from metrics.prediction_powered import inclusion_probabilities, poisson_draw

from core import sql
from core.errors import ActionError, Code

from .models import (FINAL_STATUSES, HOLDS_PERSON, HOLDS_SLOT, Annotation, Assignment, Batch, BatchItem,
                     BatchState, Campaign, CampaignSettings, Disagreement, DisagreementStatus, Event, EventKind,
                     GoldLabel, GoldMethod, GoldVersion, ItemFlag, ItemStatus, LeaseStatus, Membership, Policy,
                     Protocol, QCReview, QCSampleItem, Role, Selection, WORKER_ROLES)
from . import judges
from .qc import draw_sample, new_sample_secret, sample_seed
from .rules import item_outcome
from .policy import RESOLVE, refusal, roles_of
from .selectors import LEASE_RELATIONS, live_lease_and_first_batch, qc_figures, seconds_until_submit_allowed

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


# ---------------------------------------------------------------- helpers

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


# ---------------------------------------------------------------- campaigns, settings, members

def _clean_settings(settings):
    try:
        settings.full_clean(exclude=["campaign"])
    except ValidationError as error:
        raise ActionError(Code.INVALID_SETTINGS, "Some settings are not valid.",
                          errors=error.message_dict) from None


def create_campaign(*, actor, name, benchmark, protocol, tasks=None, settings=None, selection=None, description="",
                    source="", worker_role=None):
    """A campaign on some tasks of one benchmark (all of them by default); its creator becomes manager.
    `worker_role`: who labels its items (its preset's; by default the protocol's, Campaign.worker_role_of)."""
    if protocol not in Protocol.values:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown protocol {protocol!r}; expected one of {Protocol.values}.")
    worker_role = worker_role or Campaign.worker_role_of(protocol)
    if worker_role not in WORKER_ROLES:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown labelling role {worker_role!r}; expected one of "
                          f"{[str(role) for role in WORKER_ROLES]}.")
    benchmark = benchmark if isinstance(benchmark, Benchmark) else Benchmark.objects.filter(slug=benchmark).first()
    if benchmark is None:
        raise ActionError(Code.INVALID_CAMPAIGN, "No such benchmark.")
    all_tasks = {task.slug: task for task in benchmark.tasks.all()}
    slugs = [getattr(t, "slug", t) for t in tasks] if tasks else list(all_tasks)
    unknown = [slug for slug in slugs if slug not in all_tasks]
    if unknown or not slugs:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Tasks {unknown or slugs} are not tasks of {benchmark.slug}.")
    values = {**PROTOCOL_DEFAULTS[protocol], **(settings or {})}
    unknown = set(values) - set(CampaignSettings.EDITABLE)
    if unknown:
        raise ActionError(Code.INVALID_SETTINGS, f"Unknown settings {sorted(unknown)}.")
    selection = selection or {}
    if set(selection) - {"external_ids"} or not isinstance(selection.get("external_ids", []), list):
        raise ActionError(Code.INVALID_CAMPAIGN, 'selection: expected {} or {"external_ids": [...]}.')
    with transaction.atomic():
        campaign = Campaign.objects.create(name=name, description=description, benchmark=benchmark, protocol=protocol,
                                           selection=selection, source=source, worker_role=worker_role,
                                           created_by=actor if actor and actor.is_authenticated else None)
        campaign.tasks.set([all_tasks[slug] for slug in slugs])
        first = CampaignSettings(campaign=campaign, version=1, created_by=campaign.created_by, **values)
        _clean_settings(first)
        first.save()
        if campaign.created_by:
            Membership.objects.create(campaign=campaign, user=actor, role=Role.MANAGER)
        record_event(campaign, EventKind.CAMPAIGN_CREATED, actor=actor,
                     figures={"protocol": protocol, "worker_role": worker_role, "tasks": slugs,
                              "settings": first.values()})
    return campaign


def update_settings(campaign, *, actor, changes, note=""):
    """Change settings. A version a batch has started with is frozen: the change makes a new version,
    which later batches and later rounds use; running rounds keep theirs."""
    require_role(actor, campaign, {Role.MANAGER}, "change settings")
    unknown = set(changes) - set(CampaignSettings.EDITABLE)
    if unknown:
        raise ActionError(Code.INVALID_SETTINGS, f"Unknown settings {sorted(unknown)}.")
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        current = current_settings(campaign)
        frozen = Batch.objects.filter(settings=current).exists()
        target = current
        if frozen:
            target = CampaignSettings(campaign=campaign, version=current.version + 1, **current.values())
        for key, value in changes.items():
            setattr(target, key, value)
        target.note, target.created_by = note, actor
        _clean_settings(target)
        target.save()
        campaign._current_settings = target
        record_event(campaign, EventKind.SETTINGS_CHANGED, actor=actor, reason=note,
                     figures={"version": target.version, "new_version": frozen, "changes": changes})
    return target


def add_member(campaign, *, actor, user, role):
    require_role(actor, campaign, {Role.MANAGER}, "add members")
    if role not in Role.values:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown role {role!r}; expected one of {Role.values}.")
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(campaign=campaign, user=user,
                                                                                    role=role)
        if not created and membership.active:
            raise ActionError(Code.DUPLICATE, f"{user} is already {role} in this campaign.")
        membership.active = True
        membership.save()
        record_event(campaign, EventKind.MEMBER_ADDED, actor=actor, figures={"user": user.username, "role": role})
    return membership


def set_member_active(membership, *, actor, active):
    """Members leave by deactivation: their labels and events keep pointing at them."""
    require_role(actor, membership.campaign, {Role.MANAGER}, "change members")
    with transaction.atomic():
        membership.active = active
        membership.save(update_fields=["active"])
        record_event(membership.campaign, EventKind.MEMBER_ACTIVATED if active else EventKind.MEMBER_DEACTIVATED, actor=actor,
                     figures={"user": membership.user.username, "role": membership.role})
    return membership


def campaign_items(campaign, settings):
    """The campaign's item ids: the selection, or a seeded sample of `items_per_task` per task."""
    ids = []
    for task in campaign.tasks.order_by("slug"):
        items = Item.objects.filter(task=task)
        if campaign.selection.get("external_ids"):
            items = items.filter(external_id__in=campaign.selection["external_ids"])
        task_ids = sorted(items.values_list("pk", flat=True))
        if settings.items_per_task is not None and settings.items_per_task < len(task_ids):
            task_ids = sorted(random.Random(f"{settings.seed}:{task.slug}").sample(task_ids, settings.items_per_task))
        ids += task_ids
    return ids


def next_batch_number(campaign):
    """Batches are numbered 1, 2, ... per campaign, whoever makes them (cut here, or imported with ratings)."""
    return (campaign.batches.aggregate(n=Max("number"))["n"] or 0) + 1


def active_draw(campaign, settings, ids):
    """Active selection: each item drawn independently with a probability from the judge run's uncertainty mixed
    with uniform, `active_budget` items on average (metrics.prediction_powered), seeded. Items the judge has no
    reading for count as of the mean uncertainty. {item id: inclusion probability} of the items drawn."""
    uncertainty = judges.item_uncertainty(settings.active_judge_run, ids)
    if not uncertainty:
        raise ActionError(Code.INVALID_SETTINGS, f"Run {settings.active_judge_run} has no reading of this campaign's "
                          "items to draw them by (a rating, yes/no or log-likelihood run of its tasks is needed).")
    mean = sum(uncertainty.values()) / len(uncertainty)
    pi = inclusion_probabilities([uncertainty.get(pk, mean) for pk in ids], settings.active_budget,
                                 float(settings.active_uniform_share))
    drawn = poisson_draw(pi, f"{settings.seed}:active")
    return {pk: float(p) for pk, p, chosen in zip(ids, pi, drawn) if chosen}


def cut_batches(campaign, *, actor):
    """Cut the campaign's items not yet in a batch into batches of `batch_size`, in a seeded order. Under active
    selection the items are drawn once, all of the budget at the first cut, each with its inclusion probability
    kept on its batch item (and later on its leases), so that estimates can be weighted by it."""
    require_role(actor, campaign, {Role.MANAGER}, "cut batches")
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        settings = current_settings(campaign)
        done = set(BatchItem.objects.filter(campaign=campaign).values_list("item_id", flat=True))
        ids = [pk for pk in campaign_items(campaign, settings) if pk not in done]
        probability = {}
        if settings.selection_mode == Selection.ACTIVE and ids:
            if BatchItem.objects.filter(campaign=campaign, inclusion_probability__isnull=False).exists():
                raise ActionError(Code.NOTHING_TO_CUT, "The items of this campaign were drawn by active selection "
                                                       "already; every item drawn is in a batch.")
            probability = active_draw(campaign, settings, ids)
            ids = [pk for pk in ids if pk in probability]
        if not ids:
            raise ActionError(Code.NOTHING_TO_CUT, "Every item of the campaign is already in a batch.")
        random.Random(f"{settings.seed}:cut").shuffle(ids)
        number = next_batch_number(campaign)
        batches = []
        for start in range(0, len(ids), settings.batch_size):
            chunk = ids[start:start + settings.batch_size]
            batch = Batch.objects.create(campaign=campaign, number=number)
            BatchItem.objects.bulk_create(
                [BatchItem(campaign=campaign, batch=batch, item_id=pk, position=i, needed=settings.overlap,
                           inclusion_probability=probability.get(pk))
                 for i, pk in enumerate(chunk, start=1)], batch_size=2000)
            figures = {"items": len(chunk), "settings_version": settings.version}
            if probability:
                figures["active"] = {"judge_run": settings.active_judge_run, "budget": settings.active_budget,
                                     "uniform_share": settings.active_uniform_share, "drawn": len(ids)}
            record_event(campaign, EventKind.BATCH_CREATED, batch=batch, actor=actor, to_state=BatchState.OPEN,
                         figures=figures)
            batches.append(batch)
            number += 1
    return batches


# ---------------------------------------------------------------- leases

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


def _start_next_open_batch(campaign, actor):
    """Start the lowest-numbered open batch; False when none is left. Only that batch is ever locked, so
    that concurrent callers do not start one batch each."""
    open_batches = Batch.objects.filter(campaign=campaign, state=BatchState.OPEN).order_by("number")
    first = open_batches.values_list("pk", flat=True).first()
    if first is None:
        return False
    batch = Batch.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=first)
    if batch.state == BatchState.OPEN:
        _start_batch(batch, actor=actor, reason="first lease")
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
            f"AND a.batch_item_id = bi.id AND a.round = b.round AND a.status IN ({sql.literals(HOLDS_PERSON)}) LIMIT 1) "
            "ORDER BY bi.position LIMIT 1" + sql.lock("FOR UPDATE OF bi SKIP LOCKED"))


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
    # the first one's lease. The same statement reads the campaign's worker role, the role that labels. What comes after the lock is read in the next statement: a subquery of the locking statement
    # would see the database as it was before the wait.
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
        if not (_start_next_open_batch(campaign, annotator) or reclaim_expired_leases(campaign=campaign, now=now)):
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
            record_event(assignment.campaign_id, EventKind.ITEM_SKIPPED, actor=annotator, reason=reason.strip()[:MAX_COMMENT],
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


# ---------------------------------------------------------------- submissions and outcomes

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
                raise ActionError(Code.TOO_EARLY, gettext("Read the dialogue for %(left)s more seconds before answering.")
                                  % {"left": f"{left:g}"},
                                  seconds_left=left, min_reading_seconds=settings.min_reading_seconds)
            item, form = assignment.item, assignment.item.task.form
            excluded_by = _checked_answers(form, answers, item)
            # Closed only if still live: the status read above may predate the lock (the lock keeps the row
            # from changing from here on).
            if not sql.execute("UPDATE annotation_assignment SET status = %s, closed_at = %s WHERE id = %s AND status = %s",
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


# ---------------------------------------------------------------- batches and QC

def _require_batch_labeller(batch, actor):
    """A batch is handed in by its managers or by its own labellers: those who labelled in its current round."""
    if Role.MANAGER in roles_of(actor, batch.campaign_id):
        return
    if not Annotation.objects.filter(batch_item__batch=batch, round=batch.round, annotator=actor).exists():
        raise ActionError(Code.FORBIDDEN, gettext("Only a manager of this campaign or someone who labelled this batch "
                                                  "in its current round may hand it in."))


def hand_in_batch(batch, *, actor):
    """annotating -> handed_in once every item has a final label; draws the QC sample with a secret drawn
    now (annotation/qc.py new_sample_secret), so that annotators cannot predict it. In a protocol without QC
    (Campaign.has_qc) the finished batch is complete instead: annotating -> accepted, no sample; returns None."""
    require_role(actor, batch.campaign, {Role.MANAGER, batch.campaign.worker_role}, "hand in a batch")
    return _hand_in(batch, actor=actor, by_hand=True)


def _hand_in(batch, *, actor, reason="", by_hand=False):
    """Hand in a batch: complete, drawn sample, event. By hand, only its managers and its own labellers may
    (the automatic hand-in follows whoever gave the last final label, an expert's decision included)."""
    has_qc = batch.campaign.has_qc
    with transaction.atomic():
        batch = _locked_batch(batch)
        if by_hand:
            _require_batch_labeller(batch, actor)
        if batch.state != BatchState.ANNOTATING:
            raise wrong_state(batch, gettext("only a batch being annotated can be handed in"))
        items = batch.items.all()
        status = Counter(items.values_list("status", flat=True))
        unfinished = status[ItemStatus.PENDING] + status[ItemStatus.DISAGREEMENT]
        if unfinished:
            raise ActionError(Code.NOT_COMPLETE, ngettext("%(count)s item has no final label yet.",
                                                          "%(count)s items have no final label yet.", unfinished)
                              % {"count": unfinished},
                              pending=status[ItemStatus.PENDING], disagreements=status[ItemStatus.DISAGREEMENT])
        settings = batch.settings
        round_labels = Annotation.objects.filter(batch_item__batch=batch, round=batch.round)
        figures = {"items": sum(status.values()), "labelled": status[ItemStatus.LABELLED],
                   "excluded": status[ItemStatus.EXCLUDED],
                   "by_method": dict(Counter(items.values_list("final_method", flat=True))),
                   "annotations": round_labels.count(),
                   "median_dwell_seconds": median_reading_seconds(round_labels.values_list("dwell_seconds", flat=True))}
        if not has_qc:
            # The protocol's next step is its majority (the raters' or the experts'), made into the baseline and
            # gold from these final labels: there is no QC to hand the batch to.
            _transition(batch, BatchState.ACCEPTED, actor=actor, kind=EventKind.COMPLETED,
                        reason=reason or "complete: every item has its final label; this protocol has no QC step",
                        figures={**figures, "next": "baseline and gold from the final labels"})
            return None
        candidates = list(items.filter(status=ItemStatus.LABELLED).values_list("pk", "final_value"))
        secret, public_seed = new_sample_secret(), f"{settings.seed}:{batch.pk}:{batch.round}"
        chosen = draw_sample(candidates, settings.qc_sample_size, sample_seed(public_seed, secret),
                             stratify=settings.qc_stratify)
        review = QCReview.objects.create(
            campaign_id=batch.campaign_id, batch=batch, round=batch.round, sample_secret=secret,
            sample_inputs={"public_seed": public_seed, "size": settings.qc_sample_size,
                           "stratify": settings.qc_stratify, "candidates": jsonable(candidates)})
        finals = dict(candidates)
        QCSampleItem.objects.bulk_create([
            QCSampleItem(review=review, batch_item_id=pk, position=i, annotator_value=finals[pk])
            for i, pk in enumerate(chosen, start=1)])
        _transition(batch, BatchState.HANDED_IN, actor=actor, kind=EventKind.HANDED_IN, reason=reason, figures={
            **figures, "qc_sample": len(chosen), "stratified": settings.qc_stratify})
    return review


def start_review(batch, *, actor):
    require_role(actor, batch.campaign, {Role.QC}, "review batches")
    with transaction.atomic():
        batch = _locked_batch(batch)
        if Annotation.objects.filter(batch_item__batch=batch, round=batch.round, annotator=actor).exists():
            raise ActionError(Code.OWN_WORK, gettext("You labelled items of this batch; another QC must review it."))
        review = _review(batch)
        if batch.state != BatchState.HANDED_IN or review is None:
            raise wrong_state(batch, gettext("only a handed-in batch can be reviewed"))
        review.reviewer, review.started_at = actor, timezone.now()
        review.save()
        _transition(batch, BatchState.IN_REVIEW, actor=actor, kind=EventKind.REVIEW_STARTED,
                    figures={"sample": review.sample.count()})
    return review


def _reviewing(batch, actor):
    require_role(actor, batch.campaign, {Role.QC}, "review batches")
    batch = _locked_batch(batch)
    review = _review(batch)
    if batch.state != BatchState.IN_REVIEW or review is None:
        raise wrong_state(batch, gettext("it is not in review"))
    if review.reviewer_id != actor.pk:
        raise ActionError(Code.NOT_REVIEWER, gettext("Another QC is reviewing this batch."))
    return batch, review


def record_qc_label(batch, *, actor, batch_item_id, value, note="", round_=None):
    """The QC's own label for a sampled item (may be changed until the decision); `round_`: the round of the
    sample it was given on."""
    with transaction.atomic():
        batch, review = _reviewing(batch, actor)
        if round_ is not None and round_ != review.round:
            raise ActionError(Code.WRONG_ITEM, gettext("This label was given on the sample of round %(given)s; the "
                                                       "batch is in round %(round)s now. Nothing was saved: reload "
                                                       "the page.") % {"given": round_, "round": review.round})
        entry = (review.sample.select_for_update(of=("self",)).select_related("batch_item__item__task")
                 .filter(batch_item_id=batch_item_id).first())
        if entry is None:
            raise ActionError(Code.NOT_IN_SAMPLE, gettext("This item is not in the QC sample of the batch."))
        _check_value(entry.batch_item.item, value)
        entry.qc_value, entry.qc_note, entry.qc_by, entry.qc_at = value, note, actor, timezone.now()
        entry.save()
    return entry


def accept_batch(batch, *, actor, reason="", override_reason=""):
    """in_review -> accepted. Below the thresholds only with an override reason, and flagged."""
    with transaction.atomic():
        batch, review = _reviewing(batch, actor)
        decision, labelled, size = qc_figures(review, batch.settings)
        if labelled < size:
            raise ActionError(Code.SAMPLE_INCOMPLETE, gettext("%(missing)s of %(size)s sampled items have no QC label "
                                                              "yet.") % {"missing": size - labelled, "size": size},
                              labelled=labelled, sample=size)
        override = not decision.passed
        if override and not override_reason.strip():
            raise ActionError(Code.BELOW_THRESHOLD, gettext("The sample is below the acceptance thresholds; reject "
                                                            "the batch, or accept with an override reason."), figures=jsonable(decision.to_dict()))
        # Both texts are kept: the reason typed for the decision and, below the thresholds, the override's.
        reason, override_reason = reason.strip(), override_reason.strip()
        kept = f"{reason}\nOverride: {override_reason}" if override and reason else override_reason or reason
        review.decision, review.reason, review.override = "accepted", kept if override else reason or override_reason, override
        review.figures, review.decided_at = jsonable(decision.to_dict()), timezone.now()
        review.save()
        batch.accepted_below_threshold = override
        _transition(batch, BatchState.ACCEPTED, actor=actor, kind=EventKind.ACCEPTED, reason=review.reason,
                    figures={**review.figures, "override": override})
    return batch


def reject_batch(batch, *, actor, reason):
    """in_review -> rejected, and straight back to annotating with round + 1 while rounds are left."""
    if not (reason or "").strip():
        raise ActionError(Code.REASON_REQUIRED, gettext("Say why the batch is rejected."))
    with transaction.atomic():
        batch, review = _reviewing(batch, actor)
        decision, labelled, size = qc_figures(review, batch.settings)
        against_rule = decision.passed and labelled == size
        review.decision, review.reason, review.figures = "rejected", reason, jsonable(decision.to_dict())
        review.decided_at = timezone.now()
        review.save()
        last_round = batch.round >= batch.settings.max_rounds
        _transition(batch, BatchState.REJECTED, actor=actor, kind=EventKind.REJECTED, reason=reason, figures={
            **review.figures, "labelled": labelled, "sample": size, "against_rule": against_rule,
            "max_rounds_reached": last_round})
        if not last_round:
            _reopen(batch, actor=actor, reason="rejected in QC")
    return batch


def reopen_batch(batch, *, actor, reason):
    """A manager sends a rejected batch back after max_rounds stopped it (having raised max_rounds)."""
    require_role(actor, batch.campaign, {Role.MANAGER}, "reopen batches")
    with transaction.atomic():
        batch = _locked_batch(batch)
        if batch.state != BatchState.REJECTED:
            raise wrong_state(batch, gettext("only a rejected batch can be reopened"))
        allowed = current_settings(batch.campaign).max_rounds
        if batch.round >= allowed:
            raise ActionError(Code.MAX_ROUNDS, f"Round {batch.round} is the last of {allowed}; "
                              "raise max_rounds first.")
        _reopen(batch, actor=actor, reason=reason)
    return batch


def _reopen(batch, *, actor, reason):
    """rejected -> annotating, round + 1: earlier labels are kept and marked superseded, never deleted."""
    now = timezone.now()
    settings = current_settings(batch.campaign)
    superseded = (Annotation.objects.filter(batch_item__batch=batch, round__lte=batch.round, superseded_at__isnull=True)
                  .update(superseded_at=now))
    BatchItem.objects.filter(batch=batch).update(status=ItemStatus.PENDING, taken=0, needed=settings.overlap,
                                                 final_value=None, final_method="")
    batch.round += 1
    batch.settings = settings
    _transition(batch, BatchState.ANNOTATING, actor=actor, kind=EventKind.REOPENED, reason=reason,
                figures={"round": batch.round, "superseded": superseded, "settings_version": settings.version})


# ---------------------------------------------------------------- gold

def create_gold_version(campaign, *, actor, method="campaign", note=""):
    """A new draft gold version for the campaign's benchmark.

    method "campaign": gold panel -> expert majority (adjudicated where a tie was decided); production ->
    the final labels of accepted batches; human baseline -> the raters' majority. method "source": the
    gold published with the data. Items still tied or unfinished are left out and counted.
    """
    require_role(actor, campaign, {Role.MANAGER}, "create gold versions")
    if method not in ("campaign", "source"):
        raise ActionError(Code.INVALID_VALUE, "method: expected 'campaign' or 'source'.")
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=campaign.benchmark_id)
        versions = GoldVersion.objects.filter(benchmark_id=campaign.benchmark_id)
        number = (versions.aggregate(n=Max("number"))["n"] or 0) + 1
        version = GoldVersion.objects.create(benchmark_id=campaign.benchmark_id, campaign=campaign, number=number,
                                             note=note, created_by=actor)
        batch_items = BatchItem.objects.filter(campaign=campaign).select_related("item__task", "batch")
        labels, left_out, left_items = [], Counter(), {}
        if method == "source":
            for bi in batch_items:
                value = (bi.item.source_gold or {}).get(bi.item.task.form["primary"])
                if value is None:
                    left_out["no_source_gold"] += 1
                    left_items.setdefault("no_source_gold", []).append(bi.item_id)
                else:
                    labels.append(GoldLabel(version=version, item=bi.item, value=value, method=GoldMethod.SOURCE))
        else:
            votes = {}
            for bi_id, value in (Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)
                                 .values_list("batch_item_id", "value")):
                votes.setdefault(bi_id, []).append(value)
            panel = campaign.protocol == Protocol.GOLD_PANEL
            majority = GoldMethod.EXPERT_MAJORITY if panel else GoldMethod.ANNOTATOR_MAJORITY
            for bi in batch_items:
                if bi.status != ItemStatus.LABELLED or bi.final_value is None:
                    why = bi.status if bi.status != ItemStatus.LABELLED else "tie"
                    left_out[why] += 1
                    left_items.setdefault(why, []).append(bi.item_id)
                    continue
                if campaign.protocol == Protocol.PRODUCTION and bi.batch.state != BatchState.ACCEPTED:
                    left_out["batch_not_accepted"] += 1
                    left_items.setdefault("batch_not_accepted", []).append(bi.item_id)
                    continue
                vote = majority_vote(votes.get(bi.pk, []))
                labels.append(GoldLabel(version=version, item=bi.item, value=bi.final_value,
                                        method=GoldMethod.ADJUDICATED if bi.final_method == "adjudicated" else majority,
                                        votes={str(k): n for k, n in vote.votes.items()}, margin=vote.margin))
        GoldLabel.objects.bulk_create(labels)
        if left_items:
            version.left_out = {why: sorted(ids) for why, ids in left_items.items()}
            version.save(update_fields=["left_out"])
        record_event(campaign, EventKind.GOLD_VERSION_CREATED, actor=actor, reason=note,
                     figures={"version": number, "method": method, "labels": len(labels), "left_out": dict(left_out)})
    return version


def freeze_gold_version(version, *, actor):
    """Freeze a gold version so that reports can cite it; from then on it refuses every write."""
    require_role(actor, version.campaign, {Role.MANAGER}, "freeze gold versions")
    with transaction.atomic():
        version = GoldVersion.objects.select_for_update().get(pk=version.pk)
        if version.frozen_at:
            raise ActionError(Code.GOLD_FROZEN, f"{version.citation} is already frozen.")
        version.frozen_at, version.frozen_by = timezone.now(), actor
        version.save()
        record_event(version.campaign, EventKind.GOLD_VERSION_FROZEN, actor=actor,
                     figures={"version": version.number, "citation": version.citation,
                              "labels": version.labels.count()})
    return version


# ---------------------------------------------------------------- annotators' own corrections and flags

MAX_COMMENT = 2000


@cache
def _auto_hand_in_sql():
    return (f"SELECT {sql.columns(Batch, 'b')}, {sql.columns(CampaignSettings, 's')}, {sql.columns(Campaign, 'c')} "
            "FROM annotation_batch b INNER JOIN annotation_campaignsettings s ON b.settings_id = s.id "
            "INNER JOIN annotation_campaign c ON b.campaign_id = c.id "
            "WHERE b.id = %s AND s.auto_hand_in AND b.state = %s AND NOT EXISTS(SELECT 1 FROM annotation_batchitem "
            f"bi WHERE bi.batch_id = b.id AND NOT bi.status IN ({sql.marks(FINAL_STATUSES)}) LIMIT 1)")


def auto_hand_in(batch_id, *, actor):
    """Hand a batch in by itself once its last item has a final label, when its settings say so. Runs after
    the transaction that gave the label (its own lock order: the batch first). Returns the review or None."""
    row = sql.fetch_one(_auto_hand_in_sql(), sql.params(batch_id, BatchState.ANNOTATING, *FINAL_STATUSES))
    if row is None:
        return None
    batch, at = sql.instance(Batch, row)
    batch.settings, at = sql.instance(CampaignSettings, row, at)
    batch.campaign, _ = sql.instance(Campaign, row, at)
    try:
        reason = ("handed in by itself: every item has its final label" if batch.campaign.has_qc
                  else "complete by itself: every item has its final label; this protocol has no QC step")
        return _hand_in(batch, actor=actor, reason=reason)
    except ActionError:
        return None  # another request handed it in first, or a label was reopened meanwhile


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
        if batch.state != BatchState.ANNOTATING or annotation.round != batch.round or annotation.superseded_at:
            raise ActionError(Code.NOT_CHANGEABLE, gettext("Batch %(number)s is %(state)s; answers can be changed only "
                                                           "until it is handed in.")
                              % {"number": batch.number, "state": batch.state.replace("_", " ")})
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
def pin_gold_version(campaign, version, *, actor, reason=""):
    """Choose the gold this campaign's reports cite (None: the gold published with the data).

    Only a manager of the campaign chooses, only a frozen version of its benchmark, and only one made from
    this campaign or chosen as the benchmark's gold: another campaign's gold is never taken over by
    accident. A version derived from this campaign's raters (their own majority) is refused: it would
    score them against themselves.
    """
    from .models import BenchmarkGold
    from .selectors import circular_gold

    require_role(actor, campaign, {Role.MANAGER}, "choose its gold")
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if version is not None:
            if version.benchmark_id != campaign.benchmark_id:
                raise ActionError(Code.INVALID_VALUE, f"{version.citation} is not a gold version of this campaign's "
                                  "benchmark.")
            if version.frozen_at is None:
                raise ActionError(Code.INVALID_VALUE, f"{version.citation} is a draft; freeze it before pinning it.")
            chosen = BenchmarkGold.objects.filter(benchmark_id=campaign.benchmark_id, version=version).exists()
            if version.campaign_id != campaign.pk and not chosen:
                raise ActionError(Code.FORBIDDEN, f"{version.citation} was made from campaign {version.campaign_id}; "
                                  "a campaign pins its own gold or the one chosen for the benchmark.")
            circular = circular_gold(version, [campaign.pk]).get(campaign.pk)
            if circular:
                raise ActionError(Code.INVALID_VALUE, circular + "; pin the source gold or an expert panel's gold.")
        previous = campaign.pinned_gold
        campaign.pinned_gold = version
        campaign.save(update_fields=["pinned_gold"])
        record_event(campaign, EventKind.GOLD_VERSION_PINNED, actor=actor, reason=reason,
                     figures={"version": version.number if version else None,
                              "citation": version.citation if version else "source",
                              "previous": previous.citation if previous else "source"})
    return campaign


def may_choose_benchmark_gold(user):
    return staff_or_holder(user, "annotation.choose_benchmark_gold")


def choose_benchmark_gold(benchmark, version, *, actor, reason=""):
    """Choose the gold a benchmark-level report cites (None: the source gold); staff or holders of
    the `annotation.choose_benchmark_gold` permission only. Recorded as a BenchmarkGold row and, for a
    version, as an event of the campaign it was made from."""
    from .models import BenchmarkGold

    if not may_choose_benchmark_gold(actor):
        raise ActionError(Code.FORBIDDEN, "Only staff or holders of the benchmark-gold permission may choose a "
                          "benchmark's gold.")
    if version is not None:
        if version.benchmark_id != benchmark.pk:
            raise ActionError(Code.INVALID_VALUE, f"{version.citation} is not a gold version of {benchmark.slug}.")
        if version.frozen_at is None:
            raise ActionError(Code.INVALID_VALUE, f"{version.citation} is a draft; freeze it first.")
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        choice = BenchmarkGold.objects.create(benchmark=benchmark, version=version, chosen_by=actor, reason=reason)
        if version is not None:
            record_event(version.campaign, EventKind.GOLD_VERSION_CHOSEN_FOR_BENCHMARK, actor=actor, reason=reason,
                         figures={"version": version.number, "citation": version.citation, "benchmark": benchmark.slug})
    return choice
