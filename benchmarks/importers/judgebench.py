"""JUDGE-BENCH's unified format (Bavaresco et al., ACL 2025; dmg-illc/JUDGE-BENCH `data/README.md`): one JSON
object per data set with `dataset`, `dataset_url`, `expert_annotator`, `annotations` (one entry per metric:
`metric`, `category` graded | categorical | continuous, a Jinja `prompt`, `worst`/`best` or `labels_list`) and
`instances` (`id`, `instance`: a string or an object such as `{user_prompt, response}`, and per metric
`individual_human_scores` with `majority_human` or `mean_human`).

One task (`judgebench`) with a question per metric, the first metric primary: a categorical metric is a single
choice over its `labels_list`, a graded one a scale from `worst` to `best`. The people's scores are not items:
the file carries them as labels, and `import_items` hands them to the ratings importer (one rater per position
in `individual_human_scores`, as JUDGE-BENCH reads them; no rater ids are given). The published aggregate
(`majority_human`, else `mean_human`) is the item's source gold: it is the people's own, as the study compares
its judges with it. The instance as given and the metrics' Jinja prompts stay in the item's meta, for the judges
only (a task's instructions are shown to people, and a model's prompt may cue the answer); people read the
dialogue and the response.
"""
import math
import re

from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, language_of_text, parse_json, read_text

FORMAT_SHAPE = ('JUDGE-BENCH\'s unified format: one JSON object of `dataset`, `annotations` (`metric`, `category`, '
                '`labels_list` or `worst`/`best`, `prompt`) and `instances` (`id`, `instance`, `annotations` with '
                '`individual_human_scores`); the people\'s scores come in as their labels.')
TASK_SLUG = "judgebench"
CATEGORIES = ("categorical", "graded", "continuous")
CARRIES_LABELS = True
# "USER: ...", "LAMDA: ...", "A: ...": a turn starts with a short speaker name and a colon.
SPEAKER_LINE = re.compile(r"^([A-Za-z][\w .'-]{0,30}):\s?(.*)$", re.S)


def raters_words(expert: bool) -> str:
    """How a benchmark's source names its raters: the study tells its expert sets (`expert_annotator`) apart."""
    return "expert raters" if expert else "crowd raters"


def expert_source(source: str) -> bool | None:
    """Whether a benchmark imported from the unified format had expert raters, read back from its source; None
    for a source that does not say."""
    return next((expert for expert in (True, False) if f"; {raters_words(expert)})" in (source or "")), None)


def is_unified(record):
    return isinstance(record, dict) and "instances" in record and "annotations" in record and "dataset" in record


def metric_key(metric):
    return re.sub(r"[^a-z0-9]+", "_", str(metric).lower()).strip("_") or "metric"


def load(path):
    data = parse_json(path, read_text(path))
    if not is_unified(data):
        raise ImportFailure(path, None, None, "expected one JSON object with dataset, annotations and instances")
    specs = data["annotations"]
    if not isinstance(specs, list) or not specs:
        raise ImportFailure(path, None, "annotations", "expected a non-empty list of metrics")
    instances = data["instances"]
    if not isinstance(instances, list) or not instances:
        raise ImportFailure(path, None, "instances", "expected a non-empty list of instances")
    return data, [metric_spec(path, index, spec) for index, spec in enumerate(specs)], instances


def metric_spec(path, index, spec):
    where = f"annotations[{index}]"
    if not isinstance(spec, dict) or not isinstance(spec.get("metric"), str) or not spec["metric"].strip():
        raise ImportFailure(path, where, "metric", "expected the metric's name")
    category = spec.get("category")
    if category not in CATEGORIES:
        raise ImportFailure(path, where, "category", f"expected one of {list(CATEGORIES)}, got {category!r}")
    if category == "categorical":
        labels = spec.get("labels_list")
        if not isinstance(labels, list) or len(labels) < 2 or len(set(map(str, labels))) != len(labels):
            raise ImportFailure(path, where, "labels_list", "expected two or more distinct labels")
    else:
        for bound in ("worst", "best"):
            value = spec.get(bound)
            if not isinstance(value, int) or isinstance(value, bool):
                why = ("a continuous metric with fractional bounds has no answer form here (a scale takes whole "
                       "numbers)" if isinstance(value, float) else "expected a whole number")
                raise ImportFailure(path, where, bound, why)
        if spec["worst"] == spec["best"]:
            raise ImportFailure(path, where, "best", "expected a bound other than worst")
    return spec


def question_of(spec):
    key, label = metric_key(spec["metric"]), spec["metric"].replace("_", " ").capitalize()
    if spec["category"] == "categorical":
        return {"key": key, "type": "single_choice", "label": label,
                "options": [{"value": value, "label": str(value)} for value in spec["labels_list"]]}
    low, high = sorted((spec["worst"], spec["best"]))
    return {"key": key, "type": "scale", "label": label, "scale": {"min": low, "max": high}}


def form_of(specs):
    questions = [question_of(spec) for spec in specs]
    keys = [q["key"] for q in questions]
    if len(set(keys)) != len(keys):
        raise ImportFailure("", None, "annotations", f"two metrics share the key of {keys}")
    return {"primary": keys[0], "questions": questions}


def dialogue_of(path, where, instance):
    """Turns and fields of an instance: `{user_prompt, response}` is the conversation and the reply judged;
    a string is the conversation alone. Speaker lines split on newlines (some sets write them as a literal
    backslash-n); a line without a speaker continues the turn before it."""
    if isinstance(instance, dict):
        context, response = instance.get("user_prompt", instance.get("context")), instance.get("response")
        if not isinstance(context, str):
            raise ImportFailure(path, where, "instance.user_prompt", "expected the conversation as a string")
        if response is not None and not isinstance(response, str):
            raise ImportFailure(path, where, "instance.response", "expected a string")
    elif isinstance(instance, str):
        context, response = instance, None
    else:
        raise ImportFailure(path, where, "instance", "expected a string or an object {user_prompt, response}")
    turns = []
    for line in re.split(r"\n|\\n", context):
        if not line.strip():
            continue
        match = SPEAKER_LINE.match(line.strip())
        if match:
            turns.append({"speaker": match.group(1).strip(), "text": match.group(2).strip()})
        elif turns:
            turns[-1]["text"] = f"{turns[-1]['text']}\n{line.strip()}"
        else:
            turns.append({"speaker": "text", "text": line.strip()})
    if not turns:
        raise ImportFailure(path, where, "instance", "expected a non-empty conversation")
    fields = {"response": {"speaker": "MODEL", "text": response}} if response is not None else {}
    return turns, fields


def scores_of(path, where, spec, annotation):
    """(the people's scores in rater order, None where a rater gave none; the published aggregate)."""
    key = spec["metric"]
    scores = annotation.get("individual_human_scores")
    if not isinstance(scores, list) or not scores:
        raise ImportFailure(path, where, f"annotations.{key}.individual_human_scores", "expected a non-empty list")
    values = []
    for position, score in enumerate(scores):
        field = f"annotations.{key}.individual_human_scores[{position}]"
        if score is None or (isinstance(score, float) and math.isnan(score)):
            values.append(None)
        elif spec["category"] == "categorical":
            if score not in spec["labels_list"]:
                raise ImportFailure(path, where, field, f"expected one of {spec['labels_list']}, got {score!r}")
            values.append(score)
        else:
            low, high = sorted((spec["worst"], spec["best"]))
            if isinstance(score, float) and score.is_integer():
                score = int(score)
            if not isinstance(score, int) or isinstance(score, bool) or not low <= score <= high:
                raise ImportFailure(path, where, field, f"expected a whole number from {low} to {high}, got "
                                                        f"{score!r}")
            values.append(score)
    aggregate = annotation.get("majority_human", annotation.get("mean_human"))
    return values, aggregate


def records(path):
    """(data, specs, [(ItemRecord, {metric key: [score per position]})]) of the file, all checked."""
    data, specs, instances = load(path)
    rows, seen = [], set()
    for index, instance in enumerate(instances):
        where = f"instances[{index}]"
        if not isinstance(instance, dict):
            raise ImportFailure(path, where, None, "expected an object")
        external_id = instance.get("id")
        if isinstance(external_id, bool) or not isinstance(external_id, (str, int)) or str(external_id) == "":
            raise ImportFailure(path, where, "id", "expected a string or integer id")
        if str(external_id) in seen:
            raise ImportFailure(path, where, "id", f"duplicate id {external_id!r}")
        seen.add(str(external_id))
        turns, fields = dialogue_of(path, where, instance.get("instance"))
        annotations = instance.get("annotations")
        if not isinstance(annotations, dict):
            raise ImportFailure(path, where, "annotations", "expected an object of metric -> scores")
        scores, gold = {}, {}
        for spec in specs:
            if not isinstance(annotations.get(spec["metric"]), dict):
                raise ImportFailure(path, where, f"annotations.{spec['metric']}", "expected the people's scores")
            values, aggregate = scores_of(path, where, spec, annotations[spec["metric"]])
            scores[metric_key(spec["metric"])] = values
            if aggregate is not None:
                gold[metric_key(spec["metric"])] = aggregate
        text = " ".join(turn["text"] for turn in turns)
        meta = {"language": language_of_text(text), "source_index": index, "instance": instance.get("instance"),
                "judge_prompts": {metric_key(spec["metric"]): spec.get("prompt", "") for spec in specs}}
        rows.append((ItemRecord(TASK_SLUG, str(external_id), turns, fields, meta, gold or None, where), scores))
    return data, specs, rows


def parse(path):
    data, specs, rows = records(path)
    task = TaskSpec(TASK_SLUG, str(data.get("dataset") or "JUDGE-BENCH")[:200], form_of(specs), "judgement")
    expert = str(data.get("expert_annotator", "")).lower() == "true"
    header = {"name": str(data.get("dataset", ""))[:200], "language": "en",
              "source": f"{data.get('dataset', '')} {data.get('dataset_url', '')} (JUDGE-BENCH unified format; "
                        f"{raters_words(expert)})".strip(),
              "licence": ""}
    return ParsedBenchmark(path, header, [task], [record for record, _ in rows])
