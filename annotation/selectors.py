"""Reads shared by the API, the pages, the reports and the actions."""
import math
from collections import Counter, defaultdict

from django.db.models import Count, Q
from django.utils import timezone, translation

from benchmarks.formschema import localized
from benchmarks.models import shown_meta
from core import sql
from core.errors import ActionError, Code
from metrics import MIN_ITEMS, small_sample
from metrics.aggregation import human_baseline

from .guidelines import render_guidelines
from .policy import READ_BATCHES, READ_DISAGREEMENTS
from .qc import evaluate_sample

from .models import (FINAL_STATUSES, HOLDS_PERSON, Annotation, Assignment, BatchItem, BatchState, Disagreement, DisagreementStatus,
                     GoldLabel, ItemFlag, ItemStatus, LeaseStatus, Membership, Protocol, QCReview, Role)


def batch_progress(batch):
    """Counts of a batch's items by status, in one query (the batch may be given by id)."""
    rows = (BatchItem.objects.filter(batch_id=getattr(batch, "pk", batch)).order_by()
            .values_list("batch__number", "batch__round", "batch__state", "status").annotate(n=Count("id")))
    counts = {status: n for _, _, _, status, n in rows}
    number, round_, state = rows[0][:3] if rows else (getattr(batch, "number", None), getattr(batch, "round", None),
                                                      getattr(batch, "state", None))
    total = sum(counts.values())
    done = counts.get(ItemStatus.LABELLED, 0) + counts.get(ItemStatus.EXCLUDED, 0)
    return {"batch": number, "batch_id": getattr(batch, "pk", batch), "round": round_, "state": state, "done": done,
            "total": total,
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


def item_view(item):
    """An item as a worker sees it: no gold, only the metadata in benchmarks' SHOWN_META."""
    return {"id": item.pk, "external_id": item.external_id, "dialogue": item.dialogue, "fields": item.fields,
            "meta": shown_meta(item)}


def guidelines_view(settings, language=None):
    """A settings version's guidelines as a person reads them: the text in their language (`language`, by default
    the active one: their page's) from `guidelines_by_language`, the base language of a regional code also counting
    as `localized` counts it, else the default `guidelines`. `language` says which was chosen (None: the default)."""
    language = (language or translation.get_language() or "").lower()
    texts = settings.guidelines_by_language or {}
    chosen = next((code for code in (language, language.split("-")[0]) if code and (texts.get(code) or "").strip()),
                  None)
    markdown = texts[chosen] if chosen else settings.guidelines
    return {"version": settings.version, "language": chosen, "markdown": markdown,
            "html": render_guidelines(markdown)}


# The relations lease_view reads, loaded with the assignment (actions.lease_next_item does).
LEASE_RELATIONS = ("item__task", "settings", "batch_item")


def lease_view(assignment, now=None, progress=True):
    """What the annotation page needs for one leased item: no gold, nobody else's labels."""
    now = now or timezone.now()
    item, task, settings = assignment.item, assignment.item.task, assignment.settings
    batch_id = assignment.batch_item.batch_id
    return {
        "id": assignment.pk,
        "status": assignment.status,
        "campaign": assignment.campaign_id,
        "batch_id": batch_id,
        "round": assignment.round,
        "served_at": assignment.served_at,
        "expires_at": assignment.expires_at,
        "seconds_until_submit_allowed": seconds_until_submit_allowed(assignment, now),
        "item": item_view(item),
        "task": {"id": task.pk, "slug": task.slug, "name": task.name, "instructions": task.instructions},
        "form": localized(task.form, translation.get_language()),
        "guidelines": guidelines_view(settings),
        **({"progress": labeller_progress(batch_id, assignment.annotator_id, assignment.campaign_id)}
           if progress else {}),
        "qc_feedback": qc_feedback(batch_id, assignment.round),
    }


def labeller_progress(batch, user, campaign):
    """What a labeller's page shows after each item: the batch's worker_progress (with its hand-in readiness) and
    the campaign's items left for them (left_for), counted as those count them but in one statement: the page asks
    after every submission, and one round trip costs the server less than three."""
    batch_id, user_id = getattr(batch, "pk", batch), getattr(user, "pk", user)
    left_text, left_params = _left_for_sql(campaign, user)
    row = sql.fetch_one(
        "WITH head AS (SELECT b.id, b.number, b.round, b.state, COALESCE(NULLIF(s.overlap, 0), 1) AS overlap "
        "FROM annotation_batch b LEFT OUTER JOIN annotation_campaignsettings s ON b.settings_id = s.id WHERE b.id = %s), "
        "counted AS (SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE labels >= (SELECT h.overlap FROM head h)) AS done, "
        f"COUNT(*) FILTER (WHERE NOT status IN ({sql.marks(FINAL_STATUSES)})) AS unsettled, SUM(mine) AS mine "
        # The person's own labels are counted in the same pass over the batch's items: counted apart, as a join of
        # their labels with the batch's items, a planner without fresh statistics (a new campaign) read every item
        # of the batch once per label of theirs, and the page's cycle slowed with each label.
        "FROM (SELECT COUNT(a.id) AS labels, COUNT(a.id) FILTER (WHERE a.annotator_id = %s) AS mine, "
        "bi.status AS status FROM annotation_batchitem bi "
        "LEFT OUTER JOIN annotation_annotation a ON a.batch_item_id = bi.id AND a.round = (SELECT h.round FROM head h) "
        "WHERE bi.batch_id = %s GROUP BY bi.id) per_item) "
        "SELECT head.number, head.round, head.state, counted.mine, counted.total, counted.done, counted.unsettled, "
        f"({left_text}) FROM head, counted",
        sql.params(batch_id, *FINAL_STATUSES, user_id, batch_id, *left_params))
    if row is None:  # no such batch: answered as worker_progress answers it
        return {**worker_progress(batch_id, user_id), "left_for_you": left_for(campaign, user)}
    number, round_, state, mine, total, done, unsettled, left = row
    return {"batch": number, "batch_id": batch_id, "round": round_, "state": state, "done": done, "total": total,
            "left": total - done, "mine": mine or 0, **hand_in_readiness(state, total, done, unsettled),
            "left_for_you": left}


def campaign_disagreements(campaign):
    """The campaign's disagreements in the order the trainers' view groups them: by guideline version, then id."""
    return (Disagreement.objects.filter(campaign=campaign)
            .select_related("settings", "batch_item__item", "batch_item__batch").order_by("settings__version", "id"))


def disagreements_by_guideline(campaign, rows):
    """Trainers' view: the disagreements `rows` (a page of `campaign_disagreements`), grouped by the guideline
    version the labels were given under, each group with the version's totals over the whole campaign."""
    totals = {row["settings__version"]: row for row in Disagreement.objects.filter(campaign=campaign).order_by()
              .values("settings__version").annotate(total=Count("id"), open=Count("id", filter=Q(status="open")))}
    methods = defaultdict(dict)
    for row in (Disagreement.objects.filter(campaign=campaign).order_by().values("settings__version", "method")
                .annotate(n=Count("id"))):
        methods[row["settings__version"]][row["method"] or "open"] = row["n"]
    groups = defaultdict(list)
    for d in rows:
        groups[d.settings.version].append(d)
    return [{
        "guideline_version": version,
        "note": items[0].settings.note,
        "total": totals[version]["total"],
        "open": totals[version]["open"],
        "by_method": methods[version],
        "disagreements": [{"id": d.pk, "batch": d.batch_item.batch.number, "round": d.round,
                           "item": d.batch_item.item_id, "external_id": d.batch_item.item.external_id,
                           "labels": d.labels, "status": d.status, "method": d.method,
                           "resolved_value": d.resolved_value, "reason": d.reason} for d in items],
    } for version, items in groups.items()]


def waiting_for(user, campaign, roles):
    """What waits for this person in one campaign (their home page): items to label and their open lease,
    batches to review, open disagreements, whether they see the dashboard."""
    waiting = {}
    if campaign.worker_role in roles:
        # What this person can take: the leasing rule's count (left_for), not the items others hold or had.
        waiting["to_label"] = left_for(campaign, user)
        waiting["lease"] = open_lease(campaign, user)
    if Role.QC in roles:
        waiting["to_review"] = list(campaign.batches.filter(state__in=(BatchState.HANDED_IN, BatchState.IN_REVIEW))
                                    .order_by("number"))
    if roles & READ_DISAGREEMENTS:
        waiting["disagreements"] = campaign.disagreements.filter(status=DisagreementStatus.OPEN).count()
    waiting["dashboard"] = bool(roles & READ_BATCHES)
    return waiting


def qc_figures(review, settings):
    """The QC acceptance rule applied to the sample labels given so far: (decision, labelled, sample size).
    Accepting and rejecting decide with it, and the review page shows it live."""
    sample = list(review.sample.values_list("qc_value", "annotator_value", "qc_at"))
    labelled = [(qc, ann) for qc, ann, at in sample if at is not None]
    return evaluate_sample(labelled, settings.overall_threshold, settings.class_threshold), len(labelled), len(sample)


def current_annotations(campaign):
    return Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)


def baseline_scores(campaign, gold_version=None, min_items=MIN_ITEMS):
    """Human baseline per task, scored both ways, plus the unweighted mean over tasks.

    majority: an item counts as correct when at least m = floor(k/2)+1 raters are right (DialogBench,
    2 of 3); mean_of_raters: the mean of each rater's accuracy (KoDialogBench). Gold is the item's
    source gold, or the labels of `gold_version` when given; a version made from these raters' own labels (this
    campaign's, or a campaign sharing a rater) is refused, as the reports refuse it (circular_gold). Items without
    gold, and items nobody answered yet, are counted, not scored (metrics.human_baseline, the rule the report uses);
    figures from fewer than `min_items` answered items are flagged "small sample", as the report flags them.
    """
    circular = circular_gold(gold_version, [campaign.pk]).get(campaign.pk)
    if circular:
        raise ActionError(Code.INVALID_SCOPE, f"{circular}. Leave gold_version out to score against the source gold, "
                          "or cite a gold made by other raters.")
    k = campaign.settings.overlap
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
        labels = [answers.get(item.pk, {}) for item in scored]
        baseline = human_baseline(labels, gold, k)
        majority, per_rater = baseline.majority, baseline.mean_of_raters
        n_raters = len(per_rater.raters)
        n_answered = sum(1 for a in labels if a)
        tasks.append({
            "task": task.slug, "n_items": len(items), "n_scored": len(scored),
            "n_without_gold": len(items) - len(scored), "n_answered": n_answered,
            "n_raters": n_raters, "complete": n_raters >= k and all(len(a) == n_raters and None not in a.values() for a in labels),
            "majority": {"accuracy": majority.accuracy, "n_correct": majority.n_correct, "m": baseline.m, "k": k,
                         "rule": majority.rule},
            "mean_of_raters": {"accuracy": per_rater.accuracy, "std": per_rater.std, "raters": [
                {"rater": usernames.get(r.rater, str(r.rater)), "accuracy": r.accuracy, "n_correct": r.n_correct,
                 "n_answered": r.n_answered} for r in per_rater.raters]},
            "small_sample": small_sample([(n_answered, min_items, "items")]),
        })

    def mean(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    n_answered = sum(t["n_answered"] for t in tasks)
    return {"campaign": campaign.pk, "gold": gold_version.citation if gold_version else "source",
            "min_items": min_items, "tasks": tasks,
            "overall": {"majority": mean(t["majority"]["accuracy"] for t in tasks),
                        "mean_of_raters": mean(t["mean_of_raters"]["accuracy"] for t in tasks),
                        "n_tasks": len(tasks), "n_answered": n_answered, "rule": "unweighted mean of the tasks",
                        "small_sample": small_sample([(n_answered, min_items, "items")])}}


# Kept as text: the lease path asks it on every `next` (see core.sql).
_LIVE_LEASE_AND_FIRST_BATCH = (
    "SELECT (SELECT a.id FROM annotation_assignment a WHERE a.annotator_id = %s AND a.campaign_id = %s "
    "AND a.expires_at > %s AND a.status = %s ORDER BY a.served_at LIMIT 1), "
    "(SELECT b.id FROM annotation_batch b WHERE b.campaign_id = %s AND b.state = %s ORDER BY b.number LIMIT 1)")


def live_lease_and_first_batch(campaign, user, now=None):
    """(the id of the person's live lease in the campaign: leased and not run out, the oldest first, at most one
    (see actions.lease_next_item); the id of the campaign's lowest batch being annotated), None where there is
    none, in one statement."""
    campaign_id, user_id = getattr(campaign, "pk", campaign), getattr(user, "pk", user)
    live, first_batch = sql.fetch_one(_LIVE_LEASE_AND_FIRST_BATCH, sql.params(
        user_id, campaign_id, now or timezone.now(), LeaseStatus.LEASED, campaign_id, BatchState.ANNOTATING))
    return live, first_batch


def open_lease(campaign, user, now=None):
    live, _ = live_lease_and_first_batch(campaign, user, now)
    return Assignment.objects.filter(pk=live).first() if live else None


def batches_overview(campaign):
    """Where every batch of a campaign stands: state, round, item counts and its last event."""
    from django.db.models import OuterRef, Subquery

    from .models import Batch, Event

    last = Event.objects.filter(batch=OuterRef("pk")).order_by("-id").values("id")[:1]
    batches = list(Batch.objects.filter(campaign=campaign).annotate(last_event_id=Subquery(last)).order_by("number"))
    events = Event.objects.select_related("actor").in_bulk([b.last_event_id for b in batches if b.last_event_id])
    counts = defaultdict(Counter)
    for batch_id, status, n in (BatchItem.objects.filter(campaign=campaign).order_by()
                                .values_list("batch_id", "status").annotate(n=Count("id"))):
        counts[batch_id][status] = n
    rows = []
    for batch in batches:
        c = counts[batch.pk]
        done = c[ItemStatus.LABELLED] + c[ItemStatus.EXCLUDED]
        rows.append({"batch": batch, "total": sum(c.values()), "done": done, "pending": c[ItemStatus.PENDING],
                     "disagreements": c[ItemStatus.DISAGREEMENT], "excluded": c[ItemStatus.EXCLUDED],
                     "last_event": events.get(batch.last_event_id)})
    return rows


def left_for(campaign, user):
    """Items still waiting for this person's label: pending items of the batches being annotated (or not yet
    started) that they have not labelled or skipped this round, with a free slot or their own live lease.
    Two disjoint sets (a live lease is one the person has had), counted in one statement, kept as text as
    the page asks it after every item (see core.sql)."""
    return sql.fetch_one(*_left_for_sql(campaign, user))[0]


def _left_for_sql(campaign, user):
    """left_for's statement and its parameters (labeller_progress runs it as a subquery)."""
    campaign_id, user_id = getattr(campaign, "pk", campaign), getattr(user, "pk", user)
    had = ("SELECT a.batch_item_id FROM annotation_assignment a INNER JOIN annotation_batchitem abi "
           "ON a.batch_item_id = abi.id INNER JOIN annotation_batch ab ON abi.batch_id = ab.id "
           "WHERE a.annotator_id = %s AND a.campaign_id = %s AND a.round = ab.round "
           f"AND a.status IN ({sql.marks(HOLDS_PERSON)})")
    had_params = [user_id, campaign_id, *HOLDS_PERSON]
    states = (BatchState.OPEN, BatchState.ANNOTATING)
    return (
        "SELECT COUNT(*) FROM annotation_batchitem bi INNER JOIN annotation_batch b ON bi.batch_id = b.id "
        f"WHERE b.state IN ({sql.marks(states)}) AND bi.campaign_id = %s AND bi.status = %s "
        f"AND ((bi.taken < bi.needed AND NOT bi.id IN ({had})) OR bi.id IN ({had} AND a.status = %s))",
        sql.params(*states, campaign_id, ItemStatus.PENDING, *had_params, *had_params, LeaseStatus.LEASED))


def qc_feedback(batch, round_):
    """Why QC sent this batch back: the rejection of the round before `round_` (None in round 1)."""
    if round_ <= 1:
        return None
    review = (QCReview.objects.filter(batch_id=getattr(batch, "pk", batch), round=round_ - 1, decision="rejected")
              .values("round", "reason", "decided_at").first())
    return review


def disagreement_answers(disagreement, blind):
    """Each label of a disagreement's round with the whole answer (reasons, comments) and the item's flags.
    For a blind voter (`blind`) no one's answers and no names: the panel votes blind."""
    rows = Annotation.objects.none() if blind else (Annotation.objects.filter(batch_item_id=disagreement.batch_item_id, round=disagreement.round)
            .select_related("annotator").order_by("submitted_at", "id"))
    flags = ItemFlag.objects.filter(batch_item_id=disagreement.batch_item_id).select_related("author").order_by("id")
    names = {}

    def who(user):
        return f"Rater {names.setdefault(user.pk, len(names) + 1)}" if blind else user.username

    # Labels changed once another label of the item was in (actions.amend_annotation marks them in the record).
    amended = {label["annotator"]: label for label in disagreement.labels or [] if label.get("amended_after_peer")}

    def changed(user):
        label = amended.get(user.username)
        return ({"amended_after_peer": True, "first_value": label.get("first_value"),
                 "amended_at": label.get("amended_at")} if label else {"amended_after_peer": False})

    return {"answers": [{"annotator": who(a.annotator), "value": a.value, "answers": a.answers,
                         "excluded": a.excluded, **changed(a.annotator)} for a in rows],
            "flags": [{"author": who(f.author), "comment": f.comment, "round": f.round, "created_at": f.created_at}
                      for f in flags]}


def last_answer(campaign, user):
    """The person's last annotation in a campaign, while it can still be changed (its batch round is being
    annotated); None otherwise."""
    last = (Annotation.objects.filter(campaign=campaign, annotator=user).select_related("batch_item__batch", "item__task")
            .order_by("-submitted_at", "-id").first())
    if last is None or last.superseded_at or last.batch_item.batch.state != BatchState.ANNOTATING \
            or last.round != last.batch_item.batch.round:
        return None
    return last


def campaign_flags(campaign):
    """The campaign's flags, newest first (the API pages them)."""
    return (ItemFlag.objects.filter(campaign=campaign).select_related("author", "item", "batch_item__batch")
            .order_by("-id"))


def flag_views(flags, blind=False):
    return [{"id": f.pk, "item": f.item_id, "external_id": f.item.external_id, "batch": f.batch_item.batch.number,
             "round": f.round, "author": None if blind else f.author.username, "comment": f.comment,
             "created_at": f.created_at} for f in flags]


def last_answer_view(annotation):
    item, task = annotation.item, annotation.item.task
    return {"annotation": {"id": annotation.pk, "answers": annotation.answers, "round": annotation.round,
                           "submitted_at": annotation.submitted_at},
            "item": item_view(item), "task": {"id": task.pk, "slug": task.slug, "name": task.name,
                                              "instructions": task.instructions},
            "form": localized(task.form, translation.get_language())}


def blind_qc_sample(data, blind, hidden):
    """A serialized QC review for a blind reader (`blind`): the final label of each sampled item among `hidden`
    (batch item ids, policy.qc_blind_batch) left out."""
    data["blind"] = blind
    for entry in data["sample"]:
        if entry["batch_item"] in hidden:
            entry["annotator_value"] = None
    return data


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


def worker_progress(batch, annotator):
    """A batch's progress as its labellers see it: counts that no one's answers change (how many items
    have all their first labels of this round, how many are yours), so nobody learns from the counts
    whether a peer agreed. Outcomes (disagreements, exclusions) are for the batch's readers. Two statements."""
    batch_id, annotator_id = getattr(batch, "pk", batch), getattr(annotator, "pk", annotator)
    # Kept as text: the page asks after every item (see core.sql).
    row = sql.fetch_one(
        "SELECT b.number, b.round, b.state, s.overlap, (SELECT COUNT(a.id) FROM annotation_annotation a "
        "INNER JOIN annotation_batchitem bi ON a.batch_item_id = bi.id WHERE bi.batch_id = %s AND a.round = b.round "
        "AND a.annotator_id = %s GROUP BY a.round) FROM annotation_batch b LEFT OUTER JOIN "
        "annotation_campaignsettings s ON b.settings_id = s.id WHERE b.id = %s", [batch_id, annotator_id, batch_id])
    number, round_, state, overlap, mine = row or (None, None, None, 0, 0)
    # One join grouped by item: a third less of PostgreSQL's time than a count per item (1.8 against 2.7 ms at
    # 1,000 items with two labels each). The same statement counts the items without a final label, which say
    # whether the batch may be handed in (the hand-in's own rule, actions._hand_in).
    total, done, unsettled = sql.fetch_one(
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE labels >= %s), COUNT(*) FILTER (WHERE NOT status IN "
        f"({sql.marks(FINAL_STATUSES)})) FROM (SELECT COUNT(a.id) AS labels, bi.status AS status "
        "FROM annotation_batchitem bi LEFT OUTER JOIN annotation_annotation a ON a.batch_item_id = bi.id "
        "AND a.round = %s WHERE bi.batch_id = %s GROUP BY bi.id) counted",
        sql.params(overlap or 1, *FINAL_STATUSES, round_, batch_id))
    return {"batch": number, "batch_id": batch_id, "round": round_, "state": state, "done": done, "total": total,
            "left": total - done, "mine": mine or 0, **hand_in_readiness(state, total, done, unsettled)}


def hand_in_readiness(state, total, done, unsettled):
    """Whether a labeller's page offers "Hand in batch N", and why not once all labels are in: a batch is
    handed in only when every item has its final label (actions._hand_in refuses otherwise). Only a yes or
    no: which items wait, and why, is for the batch's readers. (With the automatic hand-in, a batch whose
    labels all agree is handed in at its last label, so the state says as much already.)"""
    ready = state == BatchState.ANNOTATING and total > 0 and not unsettled
    waiting = state == BatchState.ANNOTATING and total > 0 and done == total and bool(unsettled)
    return {"ready_to_hand_in": ready,
            "hand_in_blocked": ("Not every item has its final label yet: items whose labels differ wait for a "
                                "decision (or one more label). The batch can be handed in once they have it.")
            if waiting else None}


def accepted_final_labels(tasks):
    """Training data for classifiers: {item id: (final label, checked)} for the items of `tasks` whose
    batch was accepted, labelled (not excluded) in a production campaign. `checked` marks items that a
    QC sample or a gold panel looked at: they are kept out of training unless a run allows them.
    An item accepted in two campaigns keeps its first campaign's label."""
    from .models import QCSampleItem

    rows = (BatchItem.objects.filter(item__task__in=tasks, batch__state=BatchState.ACCEPTED,
                                     status=ItemStatus.LABELLED, final_value__isnull=False)
            .exclude(campaign__protocol=Protocol.GOLD_PANEL).order_by("campaign_id", "item_id")
            .values_list("item_id", "final_value"))
    checked = set(QCSampleItem.objects.filter(batch_item__item__task__in=tasks)
                  .values_list("batch_item__item_id", flat=True))
    checked |= set(BatchItem.objects.filter(item__task__in=tasks, campaign__protocol=Protocol.GOLD_PANEL)
                   .values_list("item_id", flat=True))
    labels = {}
    for item_id, value in rows:
        labels.setdefault(item_id, (value, item_id in checked))
    return labels


def imported_ratings(task, key, source) -> list:
    """(item, [ratings]) of the task's items rated in a campaign imported from `source` (the FED raters'
    for Huynh et al.'s few-shot examples): each live annotation's answer to `key`, missing answers left
    out; items in external id order."""
    by_item = defaultdict(list)
    rows = (Annotation.objects.filter(item__task=task, campaign__source=source, superseded_at=None, excluded=False)
            .select_related("item").order_by("item__external_id", "slot"))
    for annotation in rows:
        by_item[annotation.item].append((annotation.answers or {}).get(key))
    return [(item, [r for r in ratings if r is not None]) for item, ratings in by_item.items()]


def has_imported_ratings(task, source) -> bool:
    return Annotation.objects.filter(item__task=task, campaign__source=source).exists()


# ---------------------------------------------------------------- annotator models

def _model_gold(campaign):
    """item id -> the label the annotator model holds fixed: an expert's decision in this campaign (adjudicated),
    else an expert label of the gold version the campaign's managers pinned."""
    from .models import GoldMethod

    held = {}
    if campaign.pinned_gold_id:
        held.update(GoldLabel.objects.filter(version_id=campaign.pinned_gold_id, method__in=(
            GoldMethod.EXPERT_MAJORITY, GoldMethod.ADJUDICATED)).values_list("item_id", "value"))
    held.update(BatchItem.objects.filter(campaign=campaign, final_method="adjudicated", final_value__isnull=False)
                .values_list("item_id", "final_value"))
    return held


def _scoring_gold(campaign, items):
    """item id -> the gold an annotator's accuracy is read against: the pinned gold version unless it was made
    from this campaign's own labels (circular), else the gold published with the data. (name, labels)."""
    version = campaign.pinned_gold
    if version is not None and not circular_gold(version, [campaign.pk]):
        return version.citation, dict(GoldLabel.objects.filter(version=version).values_list("item_id", "value"))
    return "source", {item.pk: (item.source_gold or {}).get(item.task.form["primary"]) for item in items}


def annotator_estimates(campaign, batch=None, uncertain=20):
    """The campaign's annotator model (its `aggregation` setting; Dawid-Skene under majority vote) fitted per task
    to every current label of the primary question, expert gold held fixed: each annotator's estimated
    competence beside their accuracy against gold (only the annotators of `batch` when given), and the
    `uncertain` items whose aggregate label is least certain, most uncertain first."""
    from benchmarks.models import canonical_json
    from metrics.aggregation import ANNOTATOR_METHODS, annotator_model

    from .models import Aggregation

    settings = campaign.settings
    method = settings.aggregation if settings.aggregation in ANNOTATOR_METHODS else Aggregation.DAWID_SKENE
    key = lambda value: canonical_json(value) if isinstance(value, (list, dict)) else value  # noqa: E731
    rows = list(current_annotations(campaign).exclude(value__isnull=True).order_by("item_id", "id")
                .values_list("item__task_id", "item_id", "annotator_id", "annotator__username", "value"))
    mine = (set(Annotation.objects.filter(batch_item__batch=batch).values_list("annotator_id", flat=True))
            if batch is not None else None)
    held = {i: key(v) for i, v in _model_gold(campaign).items()}
    tasks = []
    for task in campaign.tasks.order_by("slug"):
        answers = [(item, who, key(value)) for task_id, item, who, _, value in rows if task_id == task.pk]
        if not answers:
            continue
        names = {who: name for task_id, _, who, name, _ in rows if task_id == task.pk}
        items = {i.pk: i for i in task.items.filter(pk__in={a[0] for a in answers}).select_related("task")}
        gold_name, gold = _scoring_gold(campaign, items.values())
        model = annotator_model(method, answers, gold={i: v for i, v in held.items() if i in items})
        people = []
        for who in model.annotators:
            if mine is not None and who not in mine:
                continue
            graded = [(v, key(gold[i])) for i, w, v in answers if w == who and gold.get(i) is not None]
            people.append({"annotator": names[who], "competence": model.competence[who],
                           "spamming": (model.spamming or {}).get(who),
                           "n_labels": sum(w == who for _, w, _ in answers),
                           "gold_accuracy": sum(v == g for v, g in graded) / len(graded) if graded else None,
                           "n_gold": len(graded)})
        ranked = model.most_uncertain(uncertain)
        position = {item: n for n, item in enumerate(model.items)}
        tasks.append({
            "task": task.slug, "gold": gold_name, "n_items": len(model.items), "gold_fixed": model.gold_fixed,
            "labels_per_item": len(answers) / len(model.items),
            "iterations": model.iterations, "converged": model.converged,
            "annotators": sorted(people, key=lambda p: p["annotator"]),
            "uncertain": [{"item_id": i, "external_id": items[i].external_id,
                           "uncertainty": float(model.uncertainty[position[i]]),
                           "aggregate": model.aggregate[position[i]],
                           "posterior": {str(label): float(p) for label, p in
                                         zip(model.labels, model.posteriors[position[i]]) if p >= 0.005}}
                          for i in ranked]})
    return {"method": method, "method_text": ANNOTATOR_METHODS[method], "rule": settings.get_aggregation_display(),
            "tasks": tasks}


def campaign_language(user) -> str:
    """The language of the campaign the person joined last among their active ones whose current settings name one
    ("" when none does): their pages' language until they choose one themselves."""
    from django.db.models import OuterRef, Subquery

    from .models import CampaignSettings, Membership

    latest = CampaignSettings.objects.filter(campaign=OuterRef("campaign")).order_by("-version").values("language")[:1]
    languages = (Membership.objects.filter(user=user, active=True).annotate(language=Subquery(latest))
                 .exclude(language="").order_by("-created_at", "-id").values_list("language", flat=True))
    return languages.first() or ""
