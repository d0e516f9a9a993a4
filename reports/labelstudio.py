"""A campaign as a Label Studio project: the labeling config (XML) matching its tasks' forms, and the tasks (JSON)
with each person's current labels as annotations (`completed_by` an email made of the username, so that Label
Studio files each under the member of that email) and every finished run's answers as predictions (`model_version`
the model's name and the run's id). Each task keeps the item as stored under `data.hb` (with the gold the report
cites under `data.hb.gold`), so that importing the file back (import_items --format labelstudio) gives the same
items, the same labels per person and the same predictions per run. The mapping between a question and a control
is benchmarks.importers.labelstudio's, the one the importer reads with.

Labels are the current round's (superseded ones stay here); a question of a task that differs between the
campaign's tasks under one key is refused, as one Label Studio project has one control per name.
"""
from __future__ import annotations

from collections import defaultdict
from xml.sax.saxutils import quoteattr

from annotation import policy
from annotation.models import Annotation, BatchItem, GoldLabel
from benchmarks.importers import labelstudio as ls
from core.errors import ActionError, Code
from modeleval.models import EvalRun, Prediction, RunState

from .selectors.scope import resolve_scope

EMAIL_DOMAIN = "humanbaseline.invalid"  # reserved (RFC 2606): an address that names a person and reaches nobody


def email_of(username):
    return f"{username.replace('@', '.at.')}@{EMAIL_DOMAIN}"


def _questions(tasks):
    """The campaign's questions by key, each once; a key asked differently by two tasks is refused."""
    questions = {}
    for task in tasks:
        for question in task.form["questions"]:
            known = questions.get(question["key"])
            if known is not None and known != question:
                raise ActionError(Code.INVALID_SCOPE, f"question {question['key']!r} differs between the campaign's "
                                                      "tasks; a Label Studio project has one control per name")
            questions[question["key"]] = question
    return questions


def _objects(items):
    """The data keys shown beside the dialogue: (name, tag, header), those some item has."""
    shown = []
    if any("response" in item.fields for item in items):
        shown.append(("response", "Text", "Response"))
    if any("question" in item.fields for item in items):
        shown.append(("question", "Text", "Question"))
    if any(isinstance(item.fields.get("options"), dict) for item in items):
        shown.append(("options", "Text", "Options"))
    if any(ls.SECOND in item.fields for item in items):
        shown.append((ls.SECOND, "Paragraphs", "Conversation 2"))
    return shown


def _paragraphs(name, header):
    return (f'  <Header value={quoteattr(header)}/>\n  <Paragraphs name="{name}" value="${name}" layout="dialogue" '
            'nameKey="speaker" textKey="text"/>\n')


def label_config(tasks, items):
    """The project's labeling config: the dialogue, what else the items show, one control per question."""
    questions = _questions(tasks)
    objects = _objects(items)
    pairwise_to = (ls.DIALOGUE, ls.SECOND) if any(name == ls.SECOND for name, _, _ in objects) else None
    option_keys = sorted({str(k) for item in items for k in (item.fields.get("options") or {})})
    parts = ["<View>\n", _paragraphs(ls.DIALOGUE, "Dialogue")]
    for name, tag, header in objects:
        parts.append(_paragraphs(name, header) if tag == "Paragraphs" else
                     f'  <Header value={quoteattr(header)}/>\n  <Text name="{name}" value="${name}"/>\n')
    for question in questions.values():
        parts.append(ls.control_xml(question, ls.choice_list(question, option_keys) if question["type"] in
                                    ("single_choice", "multi_choice", "boolean") else [], pairwise_to=pairwise_to))
    parts.append("</View>\n")
    return "".join(parts), pairwise_to


def _shown_text(value):
    if isinstance(value, dict) and "text" in value:
        return f"{value.get('speaker', '')}: {value['text']}".strip(": ")
    return "" if value is None else str(value)


def task_data(item, objects, gold):
    """A task's data: what the config shows, and the item as stored under `hb`."""
    data = {ls.DIALOGUE: item.dialogue}
    for name, tag, _ in objects:
        value = item.fields.get(name)
        if name == "options":
            data[name] = "\n".join(f"{k}. {v}" for k, v in (value or {}).items())
        elif tag == "Paragraphs":
            data[name] = value if isinstance(value, list) else []
        else:
            data[name] = _shown_text(value)
    data[ls.HB] = {"task": item.task.slug, "task_name": item.task.name, "dimension": item.task.dimension,
                   "instructions": item.task.instructions, "external_id": item.external_id,
                   "dialogue": item.dialogue, "fields": item.fields, "meta": item.meta,
                   "source_gold": item.source_gold, "form": item.task.form, "gold": gold}
    return data


def _results(form, answers, pairwise_to):
    questions = {q["key"]: q for q in form["questions"]}
    return [ls.result_of(questions[key], value, pairwise_to=pairwise_to)
            for key, value in answers.items() if key in questions and value not in (None, "", [])]


def _prediction_answer(form, prediction):
    """A prediction's answer as the primary question's value (a rating as its number), or None when unparsed."""
    if not prediction.answer:
        return None
    spec = next(q for q in form["questions"] if q["key"] == form["primary"])
    if prediction.rating is not None and spec["type"] in ("scale", "boolean", "single_choice"):
        rating = prediction.rating
        if spec["type"] == "boolean":
            return bool(rating)
        return int(rating) if float(rating).is_integer() else rating
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        return next((o["value"] for o in spec["options"] if str(o["value"]) == prediction.answer), prediction.answer)
    return prediction.answer


def campaign_project(campaign, *, user=None):
    """{"label_config": XML, "tasks": [...], "counts": {...}} of a campaign. `user`: the reader (labels by
    policy.labels_visible), None for the command line (every label)."""
    scope = resolve_scope(campaign.benchmark.slug, campaign.pk)
    tasks = list(campaign.tasks.order_by("slug"))
    batch_items = (BatchItem.objects.filter(campaign=campaign).select_related("item__task")
                   .order_by("item__task__slug", "item__external_id"))
    items = [bi.item for bi in batch_items]
    config, pairwise_to = label_config(tasks or list({i.task for i in items}), items)
    objects = _objects(items)
    labels = policy.labels_visible(user) if user is not None else Annotation.objects.all()
    labels = (labels.filter(campaign=campaign, superseded_at__isnull=True).select_related("annotator")
              .order_by("item_id", "slot"))
    by_item = defaultdict(list)
    for label in labels:
        by_item[label.item_id].append(label)
    gold = {}
    if scope.gold_version is not None:
        gold = dict(GoldLabel.objects.filter(version=scope.gold_version, item__in=items)
                    .values_list("item_id", "value"))
    runs = EvalRun.objects.filter(benchmark=campaign.benchmark, state=RunState.FINISHED).select_related("model")
    predictions = defaultdict(list)
    for prediction in (Prediction.objects.filter(run__in=runs, item__in=items, variant="")
                       .select_related("run__model").order_by("run_id")):
        predictions[prediction.item_id].append(prediction)
    out, counts = [], {"tasks": 0, "annotations": 0, "predictions": 0, "annotators": set(), "runs": set()}
    for number, item in enumerate(items, start=1):
        form = item.task.form
        primary_gold = gold.get(item.pk, (item.source_gold or {}).get(form["primary"]))
        cited = None if primary_gold is None else {
            "value": primary_gold, "citation": scope.gold_version.citation if scope.gold_version else "source"}
        annotations = [{"completed_by": {"email": email_of(label.annotator.username)},
                        "result": _results(form, label.answers, pairwise_to), "was_cancelled": False,
                        "ground_truth": False, **({"lead_time": label.dwell_seconds} if label.dwell_seconds else {})}
                       for label in by_item[item.pk]]
        predicted = []
        for prediction in predictions[item.pk]:
            answer = _prediction_answer(form, prediction)
            if answer is None:
                continue
            predicted.append({"model_version": f"{prediction.run.model.name}@run-{prediction.run_id}",
                              "result": _results(form, {form["primary"]: answer}, pairwise_to)})
            counts["runs"].add(prediction.run_id)
        out.append({"id": number, "data": task_data(item, objects, cited), "annotations": annotations,
                    "predictions": predicted})
        counts["tasks"] += 1
        counts["annotations"] += len(annotations)
        counts["predictions"] += len(predicted)
        counts["annotators"].update(label.annotator.username for label in by_item[item.pk])
    counts["annotators"], counts["runs"] = len(counts["annotators"]), len(counts["runs"])
    members = sorted({email_of(label.annotator.username) for labels in by_item.values() for label in labels})
    return {"label_config": config, "tasks": out, "annotators": members, "counts": counts}
