"""What a labeller's page shows: the leased item, the live lease, QC's feedback, the last answer."""
import math

from django.utils import timezone, translation

from benchmarks.formschema import language_choice, localized
from benchmarks.models import shown_fields, shown_meta
from core import sql

from ..guidelines import render_guidelines
from ..models import Annotation, Assignment, BatchState, LeaseStatus, QCReview
from .progress import labeller_progress


def seconds_until_submit_allowed(assignment, now=None):
    waited = ((now or timezone.now()) - assignment.served_at).total_seconds()
    return max(0.0, math.ceil((assignment.settings.min_reading_seconds - waited) * 10) / 10)


def item_view(item):
    """An item as a person sees it: no gold, no field written for models (benchmarks' shown_fields), only the
    metadata in benchmarks' SHOWN_META."""
    return {"id": item.pk, "external_id": item.external_id, "dialogue": item.dialogue, "fields": shown_fields(item),
            "meta": shown_meta(item)}


def guidelines_view(settings, language=None):
    """A settings version's guidelines as a person reads them: the text in their language (`language`, by default
    the active one: their page's) from `guidelines_by_language`, chosen as the form's names are (language_choice:
    the base language of a regional code also counts), else the default `guidelines`. `language` says which was
    chosen (None: the default)."""
    texts = settings.guidelines_by_language or {}
    chosen = language_choice(texts, (language or translation.get_language() or "").lower())
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


def qc_feedback(batch, round_):
    """Why QC sent this batch back: the rejection of the round before `round_` (None in round 1)."""
    if round_ <= 1:
        return None
    review = (QCReview.objects.filter(batch_id=getattr(batch, "pk", batch), round=round_ - 1, decision="rejected")
              .values("round", "reason", "decided_at").first())
    return review


def last_answer(campaign, user):
    """The person's last annotation in a campaign, while it can still be changed (its batch round is being
    annotated); None otherwise."""
    last = (Annotation.objects.filter(campaign=campaign, annotator=user)
            .select_related("batch_item__batch", "item__task")
            .order_by("-submitted_at", "-id").first())
    if last is None or last.superseded_at or last.batch_item.batch.state != BatchState.ANNOTATING \
            or last.round != last.batch_item.batch.round:
        return None
    return last


def last_answer_view(annotation):
    item, task = annotation.item, annotation.item.task
    return {"annotation": {"id": annotation.pk, "answers": annotation.answers, "round": annotation.round,
                           "submitted_at": annotation.submitted_at},
            "item": item_view(item), "task": {"id": task.pk, "slug": task.slug, "name": task.name,
                                              "instructions": task.instructions},
            "form": localized(task.form, translation.get_language())}
