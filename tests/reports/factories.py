"""Rows for report tests, written in bulk the way the apps store them."""
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation import actions
from annotation.models import Annotation, Batch, BatchItem, BatchState, GoldLabel, GoldVersion
from benchmarks.models import Item
from modeleval.models import EvalRun, ModelSpec, Prediction


def users(prefix, count):
    User = get_user_model()
    return [User.objects.get_or_create(username=f"{prefix}{n}")[0] for n in range(1, count + 1)]


def staff():
    return get_user_model().objects.get_or_create(username="boss", defaults={"is_staff": True})[0]


def human_campaign(benchmark, answers, *, protocol="human_baseline", raters=None, name="humans", dwell=30.0,
                   batch_size=None, state=BatchState.ACCEPTED):
    """A campaign whose raters gave `answers`: {item id: [answer of rater 1, 2, ...]} (None = no label).

    Answers are {primary key: value} for the item's task; items are cut into batches of `batch_size`."""
    items = {item.pk: item for item in Item.objects.filter(pk__in=answers).select_related("task")}
    k = max(len(a) for a in answers.values())
    raters = raters or users(f"{name}-rater-", k)
    campaign = actions.create_campaign(actor=staff(), name=name, benchmark=benchmark, protocol=protocol,
                                       tasks=sorted({i.task.slug for i in items.values()}),
                                       settings={"overlap": k, "items_per_task": None})
    settings = campaign.settings
    ids = sorted(answers)
    size = batch_size or len(ids)
    now = timezone.now()
    rows = []
    for number, start in enumerate(range(0, len(ids), size), start=1):
        batch = Batch.objects.create(campaign=campaign, number=number, state=state, settings=settings)
        bis = BatchItem.objects.bulk_create([
            BatchItem(campaign=campaign, batch=batch, item_id=i, position=p, needed=k, taken=k, status="labelled")
            for p, i in enumerate(ids[start:start + size], start=1)])
        for bi in bis:
            item = items[bi.item_id]
            primary = item.task.form["primary"]
            for slot, (rater, value) in enumerate(zip(raters, answers[bi.item_id], strict=False), start=1):
                if value is None:
                    continue
                answer = value if isinstance(value, dict) else {primary: value}
                rows.append(Annotation(campaign=campaign, batch_item=bi, item=item, annotator=rater, round=1, slot=slot,
                                       settings=settings, answers=answer, value=answer.get(primary),
                                       dwell_seconds=dwell + slot, submitted_at=now + timedelta(seconds=slot)))
    Annotation.objects.bulk_create(rows, batch_size=5000)
    return campaign


def frozen_gold(campaign, labels=None):
    """A frozen gold version: the items' source gold, or {item id: value}."""
    boss = staff()
    if labels is None:
        version = actions.create_gold_version(campaign, actor=boss, method="source")
    else:
        number = GoldVersion.objects.filter(benchmark=campaign.benchmark).count() + 1
        version = GoldVersion.objects.create(benchmark=campaign.benchmark, campaign=campaign, number=number)
        GoldLabel.objects.bulk_create([GoldLabel(version=version, item_id=i, value=v, method="source")
                                       for i, v in labels.items()])
    version = actions.freeze_gold_version(version, actor=boss)
    # Cited by the benchmark's reports and by the campaign's own (each chosen by whoever owns that report).
    actions.choose_benchmark_gold(campaign.benchmark, version, actor=boss)
    if labels is None:
        actions.pin_gold_version(campaign, version, actor=boss)
    return version


def model_run(benchmark, tasks, name, predictions, *, mode="loglikelihood", settings=None, position_policy="as_is"):
    """A finished run with `predictions`: {item id or (item id, variant): Prediction field values}."""
    model, _ = ModelSpec.objects.get_or_create(name=name, defaults={"sha256": f"{name:0<64}"[:64],
                                                                    "source": f"/models/{name}.gguf"})
    defaults = {"loglikelihood": {"rule": "per_token", "continuation": "text"}, "generate": {},
                "rating": {"quality": "", "top_k": 3}, "yes_no": {"quality": ""}, "pairwise": {}}[mode]
    run = EvalRun.objects.create(model=model, benchmark=benchmark, mode=mode, settings={**defaults, **(settings or {})},
                                 prompt_template=f"{mode} template", prompt_sha256="ab" * 32,
                                 prompt_version=f"{mode}/1",
                                 position_policy=position_policy, state="finished", items_total=len(predictions),
                                 items_done=len(predictions), finished_at=timezone.now())
    run.tasks.set(tasks)
    rows = []
    for key, fields in predictions.items():
        item_id, variant = key if isinstance(key, tuple) else (key, "")
        rows.append(Prediction(run=run, item_id=item_id, variant=variant,
                               **{"parse_status": "scored", **fields}))
    Prediction.objects.bulk_create(rows, batch_size=5000)
    return run


def options_for(logprobs, chars=None):
    """Prediction.options from {letter: summed log-probability}."""
    return [{"key": k, "source_key": k, "text": k, "logprob": lp, "n_tokens": 3, "n_chars": (chars or {}).get(k, 10)}
            for k, lp in logprobs.items()]


def wrong_option(item):
    """An option of a multiple-choice item other than its source gold."""
    return next(k for k in item.fields["options"] if k != item.source_gold["answer"])


def demo_three_raters():
    """The DialogBench demo imported as `dialogbench-demo`, its items by id, and three raters' answers per item:
    one always right, one wrong on every third item, one right on even items only."""
    from benchmarks.actions import import_items
    from benchmarks.models import Benchmark
    from tests.conftest import DEMO_DATA

    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "dialogbench-demo")
    bench = Benchmark.objects.get(slug="dialogbench-demo")
    items = list(Item.objects.filter(task__benchmark=bench).order_by("id"))
    answers = {i.pk: [i.source_gold["answer"], wrong_option(i) if n % 3 == 0 else i.source_gold["answer"],
                      i.source_gold["answer"] if n % 2 == 0 else wrong_option(i)] for n, i in enumerate(items)}
    return bench, items, answers


def every_section(seed=0):
    """Plain rows (reports.contract.ReportData, no database) of a report with every section: a multiple-choice task
    with three annotators, a judge and a model (gap, positions, crowd, human-anchored rows, judge cards); a BotChat
    arena judged by people and two judge runs, one with each order of showing stored (pairwise, BotChat's tables,
    judge against judge, a pairwise judge card with its swap consistency); the self-chat dialogues behind it
    (pass@N, utterance lengths); a DiQAD-style score rated by a rating run and a classifier trained without a domain
    (correlations, DiQAD's columns and its cross-domain table)."""
    from dataclasses import replace

    from tests.reports.test_build import PAIR_FORM, SCORE_FORM, data
    from tests.reports.test_human_anchored import mc_study

    mc, *_ = mc_study(seed=seed, n_items=80, n_labelled=40)
    pairs = [("x", "y"), ("x", "z"), ("y", "z")] * 4
    arena = [(200 + n, 2, None, {"model_a": a, "model_b": b}) for n, (a, b) in enumerate(pairs)]
    human = ["both" if n % 5 == 0 else ("1" if n % 2 == 0 else "2") for n in range(len(pairs))]
    first_judge = ["1" if n % 3 else "2" for n in range(len(pairs))]
    second_judge = ["2" if n % 4 else "both" for n in range(len(pairs))]
    gold = [2, 1, 0, 2, 1, 0, 2, 2, 1, 0, 1, 2]
    answers = ["2", "1", "1", "2", "0", "0", "2", "1", "1", "0", "1", "2"]
    ratings = [1.9, 1.2, 0.8, 1.7, 0.4, 0.1, 1.6, 1.1, 0.9, 0.3, 1.0, 1.8]
    domains = ["health", "health", "health", "law", "law", "law", "law", "health", "law", "health", "law", "health"]
    scored = [(300 + n, 3, g, {"domain": domains[n]}) for n, g in enumerate(gold)]
    rest = data([(2, "arena", PAIR_FORM), (3, "quality", SCORE_FORM)], arena + scored,
                [(200 + n, a, human[n], 1, True, 1, None) for n in range(len(pairs)) for a in (10, 11)]
                + [(300 + n, a, g if a == 10 else max(0, g - n % 2), 1, True, 1, None)
                   for n, g in enumerate(gold) for a in (10, 11)],
                [(5, 200 + n, first_judge[n], None) for n in range(len(pairs))]
                + [(6, 200 + n, second_judge[n], None) for n in range(len(pairs))]
                + [(3, 300 + n, a, r) for n, (a, r) in enumerate(zip(answers, ratings, strict=True))]
                + [(4, 300 + n, str(max(0, g - n % 3)), float(g)) for n, g in enumerate(gold) if domains[n] == "law"],
                [(5, "judge-1", "pairwise", {"preset": "botchat"}, [2]), (6, "judge-2", "pairwise", {}, [2]),
                 (3, "rater", "rating", {"quality": "score"}, [3]),
                 (4, "ernie-law", "classify", {"question": "score"}, [3])])
    rest.runs[3]["model__trained_by__settings"] = {"holdout_domain": "law"}
    steps = {key: [] for key in ("run_id", "item_id", "source_a", "source_b", "label_1", "a_position_1", "label_2",
                                 "a_position_2", "decided")}
    for n, (a, b) in enumerate(pairs):
        for key, value in (("run_id", 5), ("item_id", 200 + n), ("source_a", f"{a}{n // 3}"),
                           ("source_b", f"{b}{n // 3}"), ("label_1", ("2", "1", "both", "neither")[n % 4]),
                           ("a_position_1", "1"), ("label_2", ("1", "1", "2", None)[n % 4]), ("a_position_2", "2"),
                           ("decided", "win" if n == 11 else None)):
            steps[key].append(value)
    systems = [system for a, b in pairs[:3] for system in (a, b)]
    dialogues = {"item_id": [400 + n for n in range(len(systems))], "system": systems,
                 "utterances": [[f"turn {t} of dialogue {n}" for t in range(6)] for n in range(len(systems))],
                 "seed_utterances": [2] * len(systems), "loop_start": [None, 4, None, None, 3, None],
                 "labels": [(400 + n, 10, n % 2 == 0, 3 if n % 2 == 0 else None) for n in range(len(systems))]}
    merged = replace(
        mc, tasks=mc.tasks + rest.tasks,
        items={key: mc.items[key] + rest.items[key] for key in mc.items},
        annotations={key: (mc.annotations[key] + rest.annotations[key] if key != "answers" else
                           {k: mc.annotations["value"] + rest.annotations["value"]
                            for k in (*mc.annotations["answers"], *rest.annotations["answers"])})
                     for key in mc.annotations},
        predictions={key: mc.predictions[key] + rest.predictions[key] for key in mc.predictions},
        runs=mc.runs + rest.runs, pairwise_steps=steps, dialogues=dialogues)
    return merged
