"""What trainers, experts and QC read: disagreements, flags, the QC sample and its figures."""
from collections import defaultdict

from django.db.models import Count, Q

from ..models import Annotation, Disagreement, ItemFlag
from ..qc import evaluate_sample


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


def disagreement_answers(disagreement, blind):
    """Each label of a disagreement's round with the whole answer (reasons, comments) and the item's flags.
    For a blind voter (`blind`) no one's answers and no names: the panel votes blind."""
    rows = Annotation.objects.none() if blind else (
        Annotation.objects.filter(batch_item_id=disagreement.batch_item_id, round=disagreement.round)
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


def qc_figures(review, settings):
    """The QC acceptance rule applied to the sample labels given so far: (decision, labelled, sample size).
    Accepting and rejecting decide with it, and the review page shows it live."""
    sample = list(review.sample.values_list("qc_value", "annotator_value", "qc_at"))
    labelled = [(qc, ann) for qc, ann, at in sample if at is not None]
    return evaluate_sample(labelled, settings.overall_threshold, settings.class_threshold), len(labelled), len(sample)


def blind_qc_sample(data, blind, hidden):
    """A serialized QC review for a blind reader (`blind`): the final label of each sampled item among `hidden`
    (batch item ids, CampaignAccess.qc_blind_batch) left out."""
    data["blind"] = blind
    for entry in data["sample"]:
        if entry["batch_item"] in hidden:
            entry["annotator_value"] = None
    return data


def campaign_flags(campaign):
    """The campaign's flags, newest first (the API pages them)."""
    return (ItemFlag.objects.filter(campaign=campaign).select_related("author", "item", "batch_item__batch")
            .order_by("-id"))


def flag_views(flags, blind=False):
    return [{"id": f.pk, "item": f.item_id, "external_id": f.item.external_id, "batch": f.batch_item.batch.number,
             "round": f.round, "author": None if blind else f.author.username, "comment": f.comment,
             "created_at": f.created_at} for f in flags]
