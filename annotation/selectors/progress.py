"""How far batches and campaigns are: counts for the dashboard, the labeller's page and the hand-in offer."""
from collections import Counter, defaultdict

from django.db.models import Count, F

from core import sql

from ..models import HOLDS_PERSON, BatchItem, BatchState, EventKind, ItemStatus, LeaseStatus


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


def labeller_progress(batch, user, campaign):
    """What a labeller's page shows after each item: the batch's worker_progress (with its hand-in readiness) and
    the campaign's items left for them (left_for), counted as those count them but in one statement: the page asks
    after every submission, and one round trip costs the server less than three."""
    batch_id, user_id = getattr(batch, "pk", batch), getattr(user, "pk", user)
    left_text, left_params = _left_for_sql(campaign, user)
    counted = _COUNTED.format(round="(SELECT h.round FROM head h)", overlap="(SELECT h.overlap FROM head h)")
    row = sql.fetch_one(
        "WITH head AS (SELECT b.id, b.number, b.round, b.state, b.campaign_id, "
        f"COALESCE(NULLIF(s.overlap, 0), 1) AS overlap, s.auto_hand_in, {_REQUESTED} AS requested "
        "FROM annotation_batch b LEFT OUTER JOIN annotation_campaignsettings s ON b.settings_id = s.id WHERE b.id = "
        "%s), "
        f"counted AS ({counted}) "
        f"SELECT head.number, head.round, head.state, ({_MINE.format(head='head')}), counted.total, counted.done, "
        f"head.auto_hand_in, head.requested, ({left_text}) FROM head, counted",
        sql.params(EventKind.HAND_IN_REQUESTED, batch_id, batch_id, user_id, *left_params))
    if row is None:  # no such batch: answered as worker_progress answers it
        return {**worker_progress(batch_id, user_id), "left_for_you": left_for(campaign, user)}
    number, round_, state, mine, total, done, auto_hand_in, requested, left = row
    return {"batch": number, "batch_id": batch_id, "round": round_, "done": done, "total": total,
            "left": total - done, "mine": mine or 0, **labeller_view(state, total, done, auto_hand_in, requested),
            "left_for_you": left}


# A batch's items (bi.batch_id = %s) and those with all their labels of the round: counted from the counts each
# item keeps (BatchItem.labels, kept by the database), one pass over the batch's items without reading a label.
# An item is done once it has the overlap's labels, agreeing or not (nobody learns from it whether a peer agreed).
_COUNTED = ("SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE bi.labels_round = {round} AND bi.labels >= {overlap}) "
            "AS done FROM annotation_batchitem bi WHERE bi.batch_id = %s")
# The person's (%s) labels of the batch's round, read through their own labels in the campaign (the annotation_mine
# index), each one's item by its key; `head` is a row with the batch's id, round and campaign_id. Written as a join,
# a planner without statistics (a new campaign) read the batch's items once per label of theirs.
_MINE = ("SELECT COUNT(*) FROM annotation_annotation ma WHERE ma.campaign_id = {head}.campaign_id "
         "AND ma.annotator_id = %s AND ma.round = {head}.round AND (SELECT mbi.batch_id FROM annotation_batchitem mbi "
         "WHERE mbi.id = ma.batch_item_id) = {head}.id")


def batches_overview(campaign):
    """Where every batch of a campaign stands: state, round, item counts, its last event and the hand-in a labeller
    asked for that waits for decisions (hand_in_requests)."""
    from django.db.models import OuterRef, Subquery

    from ..models import Batch, Event

    last = Event.objects.filter(batch=OuterRef("pk")).order_by("-id").values("id")[:1]
    batches = list(Batch.objects.filter(campaign=campaign).annotate(last_event_id=Subquery(last)).order_by("number"))
    events = Event.objects.select_related("actor").in_bulk([b.last_event_id for b in batches if b.last_event_id])
    counts = defaultdict(Counter)
    for batch_id, status, n in (BatchItem.objects.filter(campaign=campaign).order_by()
                                .values_list("batch_id", "status").annotate(n=Count("id"))):
        counts[batch_id][status] = n
    requests = hand_in_requests(campaign)
    rows = []
    for batch in batches:
        c = counts[batch.pk]
        done = c[ItemStatus.LABELLED] + c[ItemStatus.EXCLUDED]
        rows.append({"batch": batch, "total": sum(c.values()), "done": done, "pending": c[ItemStatus.PENDING],
                     "disagreements": c[ItemStatus.DISAGREEMENT], "excluded": c[ItemStatus.EXCLUDED],
                     "last_event": events.get(batch.last_event_id), "hand_in_request": requests.get(batch.pk)})
    return rows


def active_draw_view(campaign):
    """What active selection drew for the campaign, for its manager: the draw's figures as the cut recorded them
    (candidates, drawn, left out, budget, uniform share, judge run, the spread of the inclusion probabilities of
    the items drawn and of those left out) and each drawn item's inclusion probability (`items`: external id,
    batch number, probability; the likeliest first). None where no item was drawn by active selection."""
    from ..models import Event, EventKind

    event = (Event.objects.filter(campaign=campaign, kind=EventKind.BATCH_CREATED, figures__has_key="active")
             .order_by("id").first())
    if event is None:
        return None
    items = (BatchItem.objects.filter(campaign=campaign, inclusion_probability__isnull=False)
             .order_by("-inclusion_probability", "item__external_id")
             .values_list("item__external_id", "batch__number", "inclusion_probability"))
    return {**event.figures["active"], "items": [{"external_id": external_id, "batch": number, "probability": p}
                                                 for external_id, number, p in items]}


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
    # The campaign's batches first, then their pending items on the partial index: joined item by item, each of
    # the campaign's pending items read its batch's row again (half the statement's time at 1,000 items).
    return (
        "SELECT COUNT(*) FROM annotation_batchitem bi WHERE bi.batch_id IN (SELECT b.id FROM annotation_batch b "
        f"WHERE b.campaign_id = %s AND b.state IN ({sql.marks(states)})) AND bi.status = %s "
        f"AND ((bi.taken < bi.needed AND NOT bi.id IN ({had})) OR bi.id IN ({had} AND a.status = %s))",
        sql.params(campaign_id, *states, ItemStatus.PENDING, *had_params, *had_params, LeaseStatus.LEASED))


def worker_progress(batch, annotator):
    """A batch's progress as its labellers see it: counts that no one's answers change (how many items
    have all their first labels of this round, how many are yours), so nobody learns from the counts
    whether a peer agreed. Outcomes (disagreements, exclusions) are for the batch's readers. Two statements."""
    batch_id, annotator_id = getattr(batch, "pk", batch), getattr(annotator, "pk", annotator)
    # Kept as text: the page asks after every item (see core.sql).
    row = sql.fetch_one(
        f"SELECT b.number, b.round, b.state, s.overlap, s.auto_hand_in, {_REQUESTED}, (SELECT COUNT(a.id) "
        "FROM annotation_annotation a "
        "INNER JOIN annotation_batchitem bi ON a.batch_item_id = bi.id WHERE bi.batch_id = %s AND a.round = b.round "
        "AND a.annotator_id = %s GROUP BY a.round) FROM annotation_batch b LEFT OUTER JOIN "
        "annotation_campaignsettings s ON b.settings_id = s.id WHERE b.id = %s",
        [EventKind.HAND_IN_REQUESTED, batch_id, annotator_id, batch_id])
    number, round_, state, overlap, auto_hand_in, requested, mine = row or (None, None, None, 0, True, False, 0)
    total, done = sql.fetch_one(_COUNTED.format(round="%s", overlap="%s"), sql.params(round_, overlap or 1, batch_id))
    return {"batch": number, "batch_id": batch_id, "round": round_, "done": done, "total": total,
            "left": total - done, "mine": mine or 0, **labeller_view(state, total, done, auto_hand_in, requested)}


LABELLER_COMPLETE = "complete"
# The states a batch whose labels are all in may be in while nobody has decided on it yet: which of them it is says
# whether its labels agreed (the automatic hand-in follows the last final label; a protocol without QC is accepted
# at once), so its labellers see them as one.
_SETTLING = (BatchState.ANNOTATING, BatchState.HANDED_IN, BatchState.IN_REVIEW, BatchState.ACCEPTED)


def labeller_view(state, total, done, auto_hand_in, requested=False):
    """The batch's state as its labellers see it, and whether their page offers "Hand in batch N": nothing in it
    depends on whether anyone's labels agreed. A batch whose labels of this round are all in reads "complete",
    whether it waits for a decision, was handed in or accepted; the hand-in is offered (where the batch is handed
    in by hand) once every label is in, and no longer once a labeller asked for it (`requested`: a hand-in that
    waits for the experts' decisions, actions.batches.hand_in_batch, reads as one made at once). Whether it can
    be handed in yet (every item with its final label, actions.batches._hand_in) is for the batch's readers."""
    all_in = total > 0 and done == total
    shown = LABELLER_COMPLETE if all_in and state in _SETTLING else state
    return {"state": shown,
            "ready_to_hand_in": bool(all_in and state == BatchState.ANNOTATING and not auto_hand_in
                                     and not requested)}


def labeller_handed_in_state(has_qc):
    """The state a labeller is told their batch is in once they handed it in: handed in to QC (a protocol without
    QC: complete), whether it went on at once or waits for the experts' decisions (hand_in_requests)."""
    return BatchState.HANDED_IN if has_qc else LABELLER_COMPLETE


def hand_in_requests(campaign):
    """The hand-ins that labellers asked for and that wait for the experts, for the campaign's managers: by batch
    id, who asked first (`by`), when (`at`), and how many items still wait for a decision (`decisions`, open
    disagreements) or for labels (`labels`). Only batches still being annotated in the round the request was
    made in (a rejected batch's new round asks again)."""
    from ..models import Event

    rows = (Event.objects.filter(campaign=campaign, kind=EventKind.HAND_IN_REQUESTED,
                                 batch__state=BatchState.ANNOTATING, round=F("batch__round"))
            .order_by("id").values_list("batch_id", "actor__username", "created_at"))
    requests = {}
    for batch_id, by, at in rows:
        requests.setdefault(batch_id, {"by": by, "at": at})
    counts = defaultdict(Counter)
    for batch_id, status, n in (BatchItem.objects.filter(batch_id__in=requests).order_by()
                                .values_list("batch_id", "status").annotate(n=Count("id"))):
        counts[batch_id][status] = n
    for batch_id, request in requests.items():
        request.update(decisions=counts[batch_id][ItemStatus.DISAGREEMENT], labels=counts[batch_id][ItemStatus.PENDING])
    return requests


# Whether a labeller asked for the batch's hand-in in its current round (the batch's alias is b).
_REQUESTED = ("EXISTS(SELECT 1 FROM annotation_event e WHERE e.batch_id = b.id AND e.kind = %s "
              "AND e.round = b.round)")
