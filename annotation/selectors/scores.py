"""Figures from the labels: the human baseline, annotator models, accepted and imported labels."""
from collections import defaultdict

from core.errors import ActionError, Code
from metrics import MIN_ITEMS, small_sample
from metrics.aggregation import human_baseline

from ..models import Annotation, BatchItem, BatchState, GoldLabel, ItemStatus, Membership, Protocol
from .gold import circular_gold


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
            "n_raters": n_raters,
            "complete": n_raters >= k and all(len(a) == n_raters and None not in a.values() for a in labels),
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


def accepted_final_labels(tasks):
    """Training data for classifiers: {item id: (final label, checked)} for the items of `tasks` whose
    batch was accepted, labelled (not excluded) in a production campaign. `checked` marks items that a
    QC sample or a gold panel looked at: they are kept out of training unless a run allows them.
    An item accepted in two campaigns keeps its first campaign's label."""
    from ..models import QCSampleItem

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


def _model_gold(campaign):
    """item id -> the label the annotator model holds fixed: an expert's decision in this campaign (adjudicated),
    else an expert label of the gold version the campaign's managers pinned."""
    from ..models import GoldMethod

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
    from metrics.aggregation import (
        ANNOTATOR_METHODS,
        MAJORITY_DISAGREEMENT_SHOWN,
        annotator_model,
        disagreement_with_majority,
        majority_label,
    )

    from ..models import ANNOTATOR_MODEL_NAMES, Aggregation

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
        votes = {}
        for i, _, value in answers:
            if i in position and i in ranked:
                votes.setdefault(i, []).append(value)
        tasks.append({
            "task": task.slug, "gold": gold_name, "n_items": len(model.items), "gold_fixed": model.gold_fixed,
            "labels_per_item": len(answers) / len(model.items),
            "iterations": model.iterations, "converged": model.converged,
            "majority_disagreement": (differ := disagreement_with_majority(model, answers)),
            "majority_shown": differ is not None and differ > MAJORITY_DISAGREEMENT_SHOWN,
            "annotators": sorted(people, key=lambda p: p["annotator"]),
            "uncertain": [{"item_id": i, "external_id": items[i].external_id,
                           "uncertainty": float(model.uncertainty[position[i]]),
                           "aggregate": model.aggregate[position[i]], "majority": majority_label(votes.get(i, [])),
                           "posterior": {str(label): float(p) for label, p in
                                         zip(model.labels, model.posteriors[position[i]], strict=True) if p >= 0.005}}
                          for i in ranked]})
    return {"method": method, "method_name": ANNOTATOR_MODEL_NAMES[method], "method_text": ANNOTATOR_METHODS[method],
            "rule": settings.get_aggregation_display(), "tasks": tasks}
