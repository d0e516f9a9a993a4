"""The people's side of a report: the campaigns in scope, their settings, batches, annotations (one column per
label question), QC labels, annotators and the items active selection drew."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, ExpressionWrapper, F, Q
from django.db.models.fields.json import KeyTransform

from annotation.importers import RATERS_ARE_POSITIONS
from annotation.models import Annotation, Batch, BatchItem, Campaign, CampaignSettings, QCSampleItem

from ..forms import LABEL_TYPES


def label_questions(forms):
    """Keys of the questions that carry labels, over every task form, in form order."""
    keys = []
    for form in forms:
        keys += [q["key"] for q in form["questions"] if q["type"] in LABEL_TYPES and q["key"] not in keys]
    return keys


def campaign_queryset(scope):
    if scope.campaign is not None:
        return Campaign.objects.filter(pk=scope.campaign.pk)
    return Campaign.objects.filter(benchmark=scope.benchmark)


def campaign_rows(scope):
    campaigns = list(campaign_queryset(scope).order_by("id").values("id", "name", "protocol", "source"))
    settings = CampaignSettings.objects.filter(campaign__in=campaign_queryset(scope)).order_by("campaign_id", "version")
    by_campaign = {c["id"]: c for c in campaigns}
    for c in campaigns:
        c["settings"] = []
        c["raters_are_positions"] = c["source"] in RATERS_ARE_POSITIONS
    for row in settings.values("campaign_id", "version", "overlap", "guidelines", "guidelines_by_language", "note",
                               "min_reading_seconds", "aggregation", "annotator_kind", "items_per_task"):
        by_campaign[row.pop("campaign_id")]["settings"].append(row)
    return campaigns


def batch_rows(scope):
    return list(Batch.objects.filter(campaign__in=campaign_queryset(scope)).order_by("campaign_id", "number")
                .values("id", "campaign_id", "number", "state", "round", "settings__version"))


def annotation_rows(scope, task_ids, question_keys):
    """Every round's annotations of the campaigns in scope, one column per label question."""
    answers = {f"q{n}": KeyTransform(key, "answers") for n, key in enumerate(question_keys)}
    current = ExpressionWrapper(Q(superseded_at__isnull=True), output_field=BooleanField())
    return (Annotation.objects.filter(campaign__in=campaign_queryset(scope), item__task_id__in=task_ids).order_by()
            .annotate(batch_id=F("batch_item__batch_id"), current=current, **answers)
            .values_list("campaign_id", "batch_id", "item_id", "annotator_id", "round", "current", "value",
                         "excluded", "dwell_seconds", *answers))


def annotation_columns(out, tasks):
    """The annotation rows' columns with the label questions' answers under "answers"."""
    keys, shared_primary = answer_keys(tasks)
    out["answers"] = {key: out.pop(f"q{n}") for n, key in enumerate(keys)}
    if shared_primary is not None:
        out["answers"][shared_primary] = out["value"]
    return out


def qc_rows(scope):
    """The QC's labels on sampled items, with the round and decision of the review they belong to."""
    return list(QCSampleItem.objects.filter(review__campaign__in=campaign_queryset(scope)).order_by()
                .values_list("review__batch_id", "review__round", "review__decision", "batch_item__item_id",
                             "qc_value"))


def user_rows(scope):
    ids = Annotation.objects.filter(campaign__in=campaign_queryset(scope)).values("annotator_id")
    return dict(get_user_model().objects.filter(pk__in=ids).values_list("id", "username"))


def answer_keys(tasks):
    """Label questions to read from Annotation.answers: all but a key that is every task's primary,
    whose answer is Annotation.value already."""
    primaries = {t["form"]["primary"] for t in tasks}
    shared_primary = primaries.pop() if len(primaries) == 1 else None
    return [key for key in label_questions(t["form"] for t in tasks) if key != shared_primary], shared_primary


def inclusion_rows(scope):
    """item id -> the probability with which active selection drew it for labels (campaigns in scope)."""
    return dict(BatchItem.objects.filter(campaign__in=campaign_queryset(scope), inclusion_probability__isnull=False)
                .values_list("item_id", "inclusion_probability"))
