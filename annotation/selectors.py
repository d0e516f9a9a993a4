"""Reads shared by the API, the pages, the reports and the actions."""
import math
from collections import Counter, defaultdict

from django.db.models import Count, Q
from django.utils import timezone

from metrics.aggregation import m_of_k_correct, mean_of_raters_accuracy

from .models import (Annotation, Assignment, BatchItem, Campaign, Disagreement, GoldLabel, ItemStatus,
                     Membership, Protocol, Role)

# Roles that may read each kind of campaign data (gold, QC data and other people's labels are the
# sensitive ones: annotators see only their own leases and labels).
READ_BATCHES = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.EXPERT, Role.VIEWER})
READ_LABELS = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.EXPERT, Role.VIEWER})
READ_QC = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.VIEWER})
READ_GOLD = frozenset({Role.MANAGER, Role.EXPERT, Role.VIEWER})
READ_DISAGREEMENTS = frozenset({Role.MANAGER, Role.TRAINER, Role.EXPERT, Role.VIEWER})
RESOLVE = frozenset({Role.EXPERT, Role.TRAINER})


def roles_by_campaign(user):
    """{campaign id: roles} for every campaign where the user is an active member (one query, for lists)."""
    roles = defaultdict(set)
    for campaign_id, role in Membership.objects.filter(user=user, active=True).values_list("campaign_id", "role"):
        roles[campaign_id].add(role)
    return roles


def roles_of(user, campaign):
    """Active roles of a user in a campaign. Staff act as managers and viewers everywhere, never as workers."""
    if not user or not user.is_authenticated:
        return frozenset()
    campaign_id = getattr(campaign, "pk", campaign)
    memberships = Membership.objects.filter(campaign_id=campaign_id, user=user, active=True).order_by()
    roles = set(memberships.values_list("role", flat=True))
    if user.is_staff:
        roles |= {Role.MANAGER, Role.VIEWER}
    return frozenset(roles)


def campaigns_with_role(user, roles=None):
    """Ids of the campaigns where the user holds one of `roles` (any role when None); None means all (staff)."""
    if user.is_staff and (roles is None or {Role.MANAGER, Role.VIEWER} & set(roles)):
        return None
    memberships = Membership.objects.filter(user=user, active=True)
    if roles is not None:
        memberships = memberships.filter(role__in=roles)
    return memberships.values("campaign_id")


def visible_campaigns(user):
    ids = campaigns_with_role(user)
    campaigns = Campaign.objects.select_related("benchmark")
    return campaigns if ids is None else campaigns.filter(pk__in=ids)


def may_see_gold(user):
    """Gold through the items API: members who may read gold in some campaign and label in none."""
    memberships = Membership.objects.filter(user=user, active=True)
    return (memberships.filter(role__in=READ_GOLD).exists()
            and not memberships.filter(role__in=[Role.ANNOTATOR, Role.QC]).exists())


def batch_progress(batch):
    """Counts of a batch's items by status, in one query (the batch may be given by id)."""
    rows = (BatchItem.objects.filter(batch_id=getattr(batch, "pk", batch)).order_by()
            .values_list("batch__number", "batch__round", "batch__state", "status").annotate(n=Count("id")))
    counts = {status: n for _, _, _, status, n in rows}
    number, round_, state = rows[0][:3] if rows else (getattr(batch, "number", None), getattr(batch, "round", None),
                                                      getattr(batch, "state", None))
    total = sum(counts.values())
    done = counts.get(ItemStatus.LABELLED, 0) + counts.get(ItemStatus.EXCLUDED, 0)
    return {"batch": number, "round": round_, "state": state, "done": done, "total": total,
            "pending": counts.get(ItemStatus.PENDING, 0), "disagreements": counts.get(ItemStatus.DISAGREEMENT, 0),
            "excluded": counts.get(ItemStatus.EXCLUDED, 0)}


def campaign_progress(campaign):
    batches = [batch_progress(batch) for batch in campaign.batches.order_by("number")]
    return {"campaign": campaign.pk, "batches": batches,
            "done": sum(b["done"] for b in batches), "total": sum(b["total"] for b in batches),
            "by_state": dict(Counter(b["state"] for b in batches))}


def seconds_until_submit_allowed(assignment, now=None):
    waited = ((now or timezone.now()) - assignment.served_at).total_seconds()
    return max(0.0, math.ceil((assignment.settings.min_reading_seconds - waited) * 10) / 10)


# Item metadata an annotator may see; the rest (source system, source ids) could give the answer away.
SHOWN_META = ("domain", "language", "personality")


def lease_view(assignment, now=None):
    """What the annotation page needs for one leased item: no gold, nobody else's labels."""
    now = now or timezone.now()
    item, task, settings = assignment.item, assignment.item.task, assignment.settings
    batch_id = assignment.batch_item.batch_id
    mine = Annotation.objects.filter(batch_item__batch_id=batch_id, round=assignment.round,
                                     annotator=assignment.annotator_id).count()
    return {
        "id": assignment.pk,
        "status": assignment.status,
        "campaign": assignment.campaign_id,
        "round": assignment.round,
        "served_at": assignment.served_at,
        "expires_at": assignment.expires_at,
        "seconds_until_submit_allowed": seconds_until_submit_allowed(assignment, now),
        "item": {"id": item.pk, "external_id": item.external_id, "dialogue": item.dialogue, "fields": item.fields,
                 "meta": {key: item.meta[key] for key in SHOWN_META if key in item.meta}},
        "task": {"id": task.pk, "slug": task.slug, "name": task.name, "instructions": task.instructions},
        "form": task.form,
        "guidelines": {"version": settings.version, "markdown": settings.guidelines},
        "progress": {**batch_progress(batch_id), "mine": mine},
    }


def disagreements_by_guideline(campaign):
    """Trainers' view: every disagreement, grouped by the guideline version the labels were given under."""
    groups = defaultdict(list)
    rows = (Disagreement.objects.filter(campaign=campaign)
            .select_related("settings", "batch_item__item", "batch_item__batch").order_by("settings__version", "id"))
    for d in rows:
        groups[d.settings.version].append(d)
    result = []
    for version, items in groups.items():
        result.append({
            "guideline_version": version,
            "note": items[0].settings.note,
            "total": len(items),
            "open": sum(d.status == "open" for d in items),
            "by_method": dict(Counter(d.method or "open" for d in items)),
            "disagreements": [{"id": d.pk, "batch": d.batch_item.batch.number, "round": d.round,
                               "item": d.batch_item.item_id, "external_id": d.batch_item.item.external_id,
                               "labels": d.labels, "status": d.status, "method": d.method,
                               "resolved_value": d.resolved_value, "reason": d.reason} for d in items],
        })
    return result


def current_annotations(campaign):
    return Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)


def baseline_scores(campaign, gold_version=None):
    """Human baseline per task, scored both ways, plus the unweighted mean over tasks.

    majority: an item counts as correct when at least m = floor(k/2)+1 raters are right (DialogBench,
    2 of 3); mean_of_raters: the mean of each rater's accuracy (KoDialogBench). Gold is the item's
    source gold, or the labels of `gold_version` when given. Items without gold are counted, not scored.
    """
    k = campaign.settings.overlap
    m = k // 2 + 1
    gold_labels = None
    if gold_version is not None:
        gold_labels = dict(GoldLabel.objects.filter(version=gold_version).values_list("item_id", "value"))
    answers = defaultdict(dict)  # item_id -> {annotator_id: value}
    for item_id, annotator_id, value in current_annotations(campaign).values_list("item_id", "annotator_id", "value"):
        answers[item_id][annotator_id] = value
    usernames = dict(Membership.objects.filter(campaign=campaign).values_list("user_id", "user__username"))
    usernames.update(Annotation.objects.filter(campaign=campaign).order_by()
                     .values_list("annotator_id", "annotator__username").distinct())
    tasks = []
    batch_items = (BatchItem.objects.filter(campaign=campaign).select_related("item__task")
                   .order_by("item__task__slug", "item_id"))
    by_task = defaultdict(list)
    for bi in batch_items:
        by_task[bi.item.task].append(bi.item)
    for task, items in by_task.items():
        primary = task.form["primary"]
        gold, scored = [], []
        for item in items:
            value = gold_labels.get(item.pk) if gold_labels is not None else (item.source_gold or {}).get(primary)
            if value is not None:
                gold.append(value)
                scored.append(item)
        raters = sorted({a for item in scored for a in answers.get(item.pk, {})})
        rows = [[answers.get(item.pk, {}).get(r) for r in raters] for item in scored]
        majority = m_of_k_correct(rows, gold, m)
        by_rater = {rater: [row[i] for row in rows] for i, rater in enumerate(raters)}
        per_rater = mean_of_raters_accuracy(by_rater, gold, missing="skip")
        tasks.append({
            "task": task.slug, "n_items": len(items), "n_scored": len(scored),
            "n_without_gold": len(items) - len(scored),
            "n_raters": len(raters), "complete": all(None not in row for row in rows) and len(raters) >= k,
            "majority": {"accuracy": majority.accuracy, "n_correct": majority.n_correct, "m": m, "k": k,
                         "rule": majority.rule},
            "mean_of_raters": {"accuracy": per_rater.accuracy, "std": per_rater.std, "raters": [
                {"rater": usernames.get(r.rater, str(r.rater)), "accuracy": r.accuracy, "n_correct": r.n_correct,
                 "n_answered": r.n_answered} for r in per_rater.raters]},
        })

    def mean(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    return {"campaign": campaign.pk, "gold": gold_version.citation if gold_version else "source",
            "tasks": tasks,
            "overall": {"majority": mean(t["majority"]["accuracy"] for t in tasks),
                        "mean_of_raters": mean(t["mean_of_raters"]["accuracy"] for t in tasks),
                        "n_tasks": len(tasks), "rule": "unweighted mean of the tasks"}}


def open_lease(campaign, user, now=None):
    live = Assignment.objects.filter(campaign=campaign, annotator=user, status="leased",
                                     expires_at__gt=now or timezone.now())
    return live.order_by("served_at").first()


def labels_visible(user):
    """Annotations a user may read: all of a campaign for READ_LABELS roles (not a gold panel's voting
    experts: they vote blind), and always their own."""
    if user.is_staff:
        return Annotation.objects.all()
    ids = (Membership.objects.filter(user=user, active=True, role__in=READ_LABELS)
           .exclude(role=Role.EXPERT, campaign__protocol=Protocol.GOLD_PANEL).values("campaign_id"))
    return Annotation.objects.filter(Q(campaign_id__in=ids) | Q(annotator=user))


# ---------------------------------------------------------------- which gold scores whom

def gold_is_derived(version):
    """True when a gold version was made from people's labels (a majority or an adjudication), not
    copied from the gold published with the data."""
    from .models import GoldMethod

    return version.labels.exclude(method=GoldMethod.SOURCE).exists()


def circular_gold(version, campaign_ids):
    """{campaign id: reason} for each campaign whose people would be scored against their own labels by
    `version`: the campaign the version was derived from, and every campaign sharing a rater with it.
    Empty for a version copied from the source gold."""
    if version is None or not campaign_ids or not gold_is_derived(version):
        return {}
    source = version.campaign_id
    raters = set(Annotation.objects.filter(campaign_id=source).values_list("annotator_id", flat=True).distinct())
    shared = defaultdict(set)
    for campaign_id, rater in (Annotation.objects.filter(campaign_id__in=campaign_ids, annotator_id__in=raters)
                               .exclude(campaign_id=source).values_list("campaign_id", "annotator_id").distinct()):
        shared[campaign_id].add(rater)
    out = {}
    for campaign_id in campaign_ids:
        if campaign_id == source:
            out[campaign_id] = (f"{version.citation} was derived from this campaign's own labels: scoring its raters "
                                "against it would be circular")
        elif shared.get(campaign_id):
            out[campaign_id] = (f"{version.citation} was derived from the labels of campaign {source}, which shares "
                                f"{len(shared[campaign_id])} rater(s) with this campaign: scoring them against it "
                                "would be circular")
    return out
