"""Batches and QC: hand-in (by hand and by itself), review, QC labels, accept, reject, reopen."""
from collections import Counter
from functools import cache

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from core import sql
from core.errors import ActionError, Code
from metrics import median_reading_seconds

from ..models import (
    FINAL_STATUSES,
    Annotation,
    Batch,
    BatchItem,
    BatchState,
    Campaign,
    CampaignSettings,
    EventKind,
    ItemStatus,
    QCReview,
    QCSampleItem,
    Role,
)
from ..policy import roles_of
from ..qc import draw_sample, new_sample_secret, sample_seed
from ..selectors import qc_figures, worker_progress
from ._common import (
    COMPLETE_AS_REQUESTED,
    COMPLETE_BY_ITSELF,
    HANDED_IN_AS_REQUESTED,
    HANDED_IN_BY_ITSELF,
    REJECTED_IN_QC,
    _check_value,
    _locked_batch,
    _review,
    _transition,
    current_settings,
    jsonable,
    record_event,
    require_role,
    wrong_state,
)


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
    (Campaign.has_qc) the finished batch is complete instead: annotating -> accepted, no sample; returns None.

    A labeller (not a manager) is never told whether a label of theirs disagreed with a peer's: once every item
    has all its labels of the round, their hand-in is taken whether or not an item still waits for an expert's
    decision. Where one does, the request is recorded (a hand_in_requested event) and the batch is handed in by
    auto_hand_in when the last decision arrives; asked again, or asked once the batch went on to QC, the answer
    is the same. A manager is told the truth: the batch is refused until every item has its final label."""
    require_role(actor, batch.campaign, {Role.MANAGER, batch.campaign.worker_role}, "hand in a batch")
    if Role.MANAGER in roles_of(actor, batch.campaign_id):
        return _hand_in(batch, actor=actor, by_hand=True)
    with transaction.atomic():
        batch = _locked_batch(batch)
        _require_batch_labeller(batch, actor)
        if batch.state in _TAKEN:
            return None  # handed in already (by itself, or by a peer): the labeller's hand-in stands
        if batch.state == BatchState.ANNOTATING:
            progress = worker_progress(batch, actor)
            if progress["done"] < progress["total"]:
                left = progress["total"] - progress["done"]
                raise ActionError(Code.NOT_COMPLETE, ngettext("%(count)s item still waits for labels.",
                                                              "%(count)s items still wait for labels.", left)
                                  % {"count": left}, pending=left)
            if batch.items.exclude(status__in=FINAL_STATUSES).exists():
                if not hand_in_requested(batch):
                    record_event(batch.campaign_id, EventKind.HAND_IN_REQUESTED, batch=batch, actor=actor,
                                 figures={"waiting": batch.items.exclude(status__in=FINAL_STATUSES).count()})
                return None
        return _hand_in(batch, actor=actor, by_hand=True)


# The states of a batch that its labellers' hand-in has taken to, or past (a QC's decision to reject is not one).
_TAKEN = (BatchState.HANDED_IN, BatchState.IN_REVIEW, BatchState.ACCEPTED)


def hand_in_requested(batch):
    """Whether a labeller asked for the batch's hand-in in its current round (a rejected batch's new round asks
    again); such a batch is, for its labellers, handed in."""
    return batch.events.filter(kind=EventKind.HAND_IN_REQUESTED, round=batch.round).exists()


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
                                                            "the batch, or accept with an override reason."),
                              figures=jsonable(decision.to_dict()))
        # Both texts are kept: the reason typed for the decision and, below the thresholds, the override's.
        reason, override_reason = reason.strip(), override_reason.strip()
        kept = f"{reason}\nOverride: {override_reason}" if override and reason else override_reason or reason
        review.decision, review.reason, review.override = ("accepted", kept if override else reason or override_reason,
                                                           override)
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
            _reopen(batch, actor=actor, reason=REJECTED_IN_QC)
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


@cache
def _auto_hand_in_sql():
    return (f"SELECT {sql.columns(Batch, 'b')}, {sql.columns(CampaignSettings, 's')}, {sql.columns(Campaign, 'c')} "
            "FROM annotation_batch b INNER JOIN annotation_campaignsettings s ON b.settings_id = s.id "
            "INNER JOIN annotation_campaign c ON b.campaign_id = c.id "
            "WHERE b.id = %s AND (s.auto_hand_in OR EXISTS(SELECT 1 FROM annotation_event e WHERE e.batch_id = b.id "
            "AND e.kind = %s AND e.round = b.round)) AND b.state = %s "
            "AND NOT EXISTS(SELECT 1 FROM annotation_batchitem bi WHERE bi.batch_id = b.id "
            f"AND NOT bi.status IN ({sql.marks(FINAL_STATUSES)}) LIMIT 1)")


def auto_hand_in(batch_id, *, actor):
    """Hand a batch in by itself once its last item has a final label, when its settings say so or a labeller
    asked for its hand-in in this round (hand_in_batch). Runs after the transaction that gave the label (its own
    lock order: the batch first). Returns the review or None."""
    row = sql.fetch_one(_auto_hand_in_sql(), sql.params(batch_id, EventKind.HAND_IN_REQUESTED, BatchState.ANNOTATING,
                                                        *FINAL_STATUSES))
    if row is None:
        return None
    batch, at = sql.instance(Batch, row)
    batch.settings, at = sql.instance(CampaignSettings, row, at)
    batch.campaign, _ = sql.instance(Campaign, row, at)
    try:
        if batch.settings.auto_hand_in:
            reason = HANDED_IN_BY_ITSELF if batch.campaign.has_qc else COMPLETE_BY_ITSELF
        else:
            reason = HANDED_IN_AS_REQUESTED if batch.campaign.has_qc else COMPLETE_AS_REQUESTED
        return _hand_in(batch, actor=actor, reason=reason)
    except ActionError:
        return None  # another request handed it in first, or a label was reopened meanwhile
