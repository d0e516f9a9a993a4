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
        "progress": worker_progress(batch_id, assignment.annotator_id),
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
    ids = campaigns_reading(user, READ_LABELS)
    if ids is None:
        return Annotation.objects.all()
    return Annotation.objects.filter(Q(campaign_id__in=ids) | Q(annotator=user))


# ---------------------------------------------------------------- blindness and read scope
# One home for "experts vote blind": the voting experts of a gold panel read nobody's labels, votes,
# names or gold (not through labels, disagreements, baseline, gold versions, reports or items); only
# their own labels. Every read below and the permissions, pages and reports ask these functions.
BLIND_ROLE, BLIND_PROTOCOL = Role.EXPERT, Protocol.GOLD_PANEL
# Roles that read a campaign's items (dialogues and fields) through the items API; annotators and QC
# see items only through their leases and QC samples.
READ_ITEMS = frozenset({Role.MANAGER, Role.TRAINER, Role.EXPERT, Role.VIEWER})
# Roles that label: their benchmarks' source gold stays hidden from them.
LABELLING = frozenset({Role.ANNOTATOR, Role.QC})


def votes_blind(role, protocol):
    """Whether holding `role` in a campaign of `protocol` means voting blind."""
    return role == BLIND_ROLE and protocol == BLIND_PROTOCOL


def reading_roles(campaign, roles):
    """`roles` less the one that votes blind in this campaign: the roles that read others' work there."""
    return frozenset(role for role in roles if not votes_blind(role, campaign.protocol))


def reads(user, campaign, roles):
    """Whether the user reads what `roles` read in the campaign (blind voters do not)."""
    return bool(roles_of(user, campaign) & reading_roles(campaign, roles))


def can_read_labels(user, campaign):
    return reads(user, campaign, READ_LABELS)


def _blind_memberships():
    return Q(role=BLIND_ROLE, campaign__protocol=BLIND_PROTOCOL)


def campaigns_reading(user, roles):
    """Ids of the campaigns where the user reads what `roles` read (blind voters left out); None: all (staff)."""
    if user.is_staff and {Role.MANAGER, Role.VIEWER} & set(roles):
        return None
    return (Membership.objects.filter(user=user, active=True, role__in=roles).exclude(_blind_memberships())
            .values("campaign_id"))


def _labelling(user):
    return Membership.objects.filter(Q(role__in=LABELLING) | _blind_memberships(), user=user, active=True)


def labelling_benchmarks(user):
    """Benchmarks where the user labels (annotator, QC, or a blind voter) in some campaign."""
    return _labelling(user).values("campaign__benchmark_id")


def can_read_gold(user, campaign):
    """Gold and the report of a campaign: staff, and those who read its gold (managers, viewers, experts;
    not blind voters) and label nowhere on its benchmark."""
    if not user or not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    return (reads(user, campaign, READ_GOLD)
            and not _labelling(user).filter(campaign__benchmark_id=campaign.benchmark_id).exists())


def campaigns_with_readable_gold(user, campaigns):
    """The ids among `campaigns` (a Campaign queryset) whose gold and report the user may read."""
    if user.is_staff:
        return set(campaigns.values_list("pk", flat=True))
    ids = campaigns_reading(user, READ_GOLD)
    return set(campaigns.filter(pk__in=ids).exclude(benchmark_id__in=labelling_benchmarks(user))
               .values_list("pk", flat=True))


def member_scope(user):
    """What a campaign member reads of benchmarks, as Q objects over Benchmark, Task and Item, and the
    benchmarks whose source gold (and item meta) they read (registered with benchmarks.permissions)."""
    active = Membership.objects.filter(user=user, active=True)
    everything = user.has_perm("annotation.add_campaign")  # who creates campaigns chooses among all benchmarks
    campaigns = active.values("campaign_id")
    reading = active.filter(role__in=READ_ITEMS).values("campaign_id")
    gold = campaigns_reading(user, READ_GOLD)
    tasks_of = Campaign.tasks.through.objects.values("task_id")
    return {
        "benchmark": Q() if everything else Q(pk__in=Campaign.objects.filter(pk__in=campaigns).values("benchmark_id")),
        "task": Q() if everything else Q(pk__in=tasks_of.filter(campaign_id__in=campaigns)),
        "item": Q(task_id__in=tasks_of.filter(campaign_id__in=reading)),
        "gold": (Q(pk__in=Campaign.objects.filter(pk__in=gold).values("benchmark_id"))
                 & ~Q(pk__in=labelling_benchmarks(user))),
    }


def worker_progress(batch, annotator):
    """A batch's progress as its labellers see it: counts that no one's answers change (how many items
    have all their first labels of this round, how many are yours), so nobody learns from the counts
    whether a peer agreed. Outcomes (disagreements, exclusions) are for the batch's readers."""
    batch_id = getattr(batch, "pk", batch)
    row = (BatchItem.objects.filter(batch_id=batch_id).values_list("batch__number", "batch__round", "batch__state",
                                                                    "batch__settings__overlap").first())
    number, round_, state, overlap = row or (None, None, None, 0)
    labels = (Annotation.objects.filter(batch_item__batch_id=batch_id, round=round_).order_by()
              .values("batch_item_id").annotate(n=Count("id")))
    total = BatchItem.objects.filter(batch_id=batch_id).count()
    done = sum(1 for row in labels if row["n"] >= (overlap or 1))
    mine = Annotation.objects.filter(batch_item__batch_id=batch_id, round=round_,
                                     annotator=getattr(annotator, "pk", annotator)).count()
    return {"batch": number, "round": round_, "state": state, "done": done, "total": total, "left": total - done,
            "mine": mine}
