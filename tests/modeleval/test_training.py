"""DiQAD's supervised baseline: a classification head on the packaged model trained on accepted final
labels, its split stored on the run, checked items kept out of training, a worker killed mid-run
and the run ending with the predictions of an uninterrupted one."""
import json
import random
import time

import pytest
from django.core.management import call_command

from annotation.models import Batch, BatchItem, BatchState, Campaign, ItemStatus, Protocol, QCReview, QCSampleItem
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval import actions, runner
from modeleval.models import ChunkState, EvalRun, Mode, ModelSpec, Prediction, RunState
from modeleval.scorers.classifier import OPTIMIZER_FILE, render_dialogue
from modeleval.training import checkpoint_dir
from reports.build import public
from reports.render.tables import diqad_tables
from reports.service import make_report

from .conftest import client_for, wait_for

pytestmark = [pytest.mark.model, pytest.mark.slow]

# Short on 2 shared cores: the first 2 blocks of the packaged model, 24 tokens, one epoch.
FAST = {"layers": 2, "max_length": 24, "epochs": 1, "learning_rate": 3e-4, "steps_per_chunk": 4,
        "test": 40, "validation": 24}
# The learnable signal: the expert's closing words tell the class. Imbalanced, so that the majority
# class alone scores 0.45.
ENDINGS = {2: "Glad to help, all the best!", 1: "Maybe ask someone else.", 0: "No idea, whatever."}
SHARES = {2: 0.45, 1: 0.30, 0: 0.25}
DOMAINS = ("legal", "car", "finance")


def write_items(path, n=240, seed=7):
    rng = random.Random(seed)
    labels = [label for label, share in SHARES.items() for _ in range(round(share * n))]
    rng.shuffle(labels)
    with open(path, "w") as out:
        for i, label in enumerate(labels):
            question = f"Question number {rng.randint(1, 999)} about my {rng.choice(['car', 'rent', 'tax'])}?"
            answer = f"{rng.choice(['Well,', 'So,', 'OK,'])} here it is. {ENDINGS[label]}"
            out.write(json.dumps({"id": f"t-{i:04d}", "domain": DOMAINS[i % 3], "label": label,
                                  "reasons": [] if label == 2 else ["none"], "needs_verification": 0,
                                  "dialogue": [{"speaker": "user", "text": question},
                                               {"speaker": "expert", "text": answer}]}) + "\n")


def accept_labels(benchmark, *, qc_sample=(), gold_panel=()):
    """Final labels (the source label) in an accepted batch of a production campaign; `qc_sample` items are
    also in that batch's QC sample, `gold_panel` items in a gold panel campaign."""
    items = list(Item.objects.filter(task__benchmark=benchmark).order_by("external_id"))
    campaign = Campaign.objects.create(name="prod", benchmark=benchmark, protocol=Protocol.PRODUCTION)
    batch = Batch.objects.create(campaign=campaign, number=1, state=BatchState.ACCEPTED)
    rows = BatchItem.objects.bulk_create(
        BatchItem(campaign=campaign, batch=batch, item=item, position=n, status=ItemStatus.LABELLED,
                  final_value=item.source_gold["score"], final_method="agreed") for n, item in enumerate(items))
    review = QCReview.objects.create(campaign=campaign, batch=batch, round=1, decision="accepted")
    QCSampleItem.objects.bulk_create(QCSampleItem(review=review, batch_item=row, position=n,
                                                  annotator_value=row.final_value)
                                     for n, row in enumerate(r for r in rows if r.item.external_id in qc_sample))
    panel = Campaign.objects.create(name="panel", benchmark=benchmark, protocol=Protocol.GOLD_PANEL)
    panel_batch = Batch.objects.create(campaign=panel, number=1, state=BatchState.ANNOTATING)
    BatchItem.objects.bulk_create(BatchItem(campaign=panel, batch=panel_batch, item=item, position=n)
                                  for n, item in enumerate(i for i in items if i.external_id in gold_panel))
    return items


@pytest.fixture
def trainable(db, tmp_path):
    write_items(tmp_path / "train.jsonl")
    import_items(tmp_path / "train.jsonl", "diqad", "dq-train")
    return Benchmark.objects.get(slug="dq-train")


def test_render_dialogue_as_diqad():
    turns = [{"speaker": "u", "text": "Hi?"}, {"speaker": "e", "text": "Yes."}, {"speaker": "u", "text": "Why?"}]
    assert render_dialogue(turns) == "question:Hi?response:Yes.question:Why?"


def test_split_is_seeded_stratified_and_keeps_checked_items_out(packaged, trainable):
    checked = {"t-0003", "t-0010", "t-0042"}
    items = accept_labels(trainable, qc_sample={"t-0003", "t-0010"}, gold_panel={"t-0042"})
    run = actions.start_training(model=packaged, benchmark=trainable, settings=FAST, seed=5, enqueue=False)
    split = run.selection["split"]
    assert run.mode == Mode.TRAIN and run.settings["learning_rate"] == 3e-4 and run.settings["batch_size"] == 16
    assert run.settings["max_grad_norm"] == 1.0 and run.settings["labels"] == ["0", "1", "2"]
    train, validation, test = (set(split[k]) for k in ("train", "validation", "test"))
    assert len(test) == 40 and len(validation) == 24
    assert not (train & test) and not (validation & test) and not (train & validation)
    by_ext = {item.pk: item.external_id for item in items}
    checked_ids = {pk for pk, ext in by_ext.items() if ext in checked}
    assert not checked_ids & (train | validation)
    assert set(split["held_out_checked"]) | (checked_ids & test) == checked_ids
    # Stratified: the test split keeps the classes' shares.
    shares = {label: sum(run.selection["labels"][str(pk)] == label for pk in test) for label in ("2", "1", "0")}
    assert shares == {"2": 18, "1": 12, "0": 10}
    # The chunks' examples are the training items, each once per epoch.
    assert sorted(pk for c in run.chunks.order_by("index") for pk in c.item_ids) == sorted(train)
    again = actions.start_training(model=packaged, benchmark=trainable, settings=FAST, seed=5, enqueue=False)
    assert again.selection == run.selection
    allowed = actions.start_training(model=packaged, benchmark=trainable, settings={**FAST, "include_checked": True},
                                     seed=5, enqueue=False)
    assert checked_ids - set(allowed.selection["split"]["test"]) <= set(allowed.selection["split"]["train"]) | set(
        allowed.selection["split"]["validation"])
    held = actions.start_training(model=packaged, benchmark=trainable, settings={**FAST, "holdout_domain": "car"},
                                  seed=5, enqueue=False)
    domains = dict(Item.objects.values_list("pk", "meta__domain"))
    assert {domains[pk] for pk in held.selection["split"]["test"]} == {"car"}
    assert "car" not in {domains[pk] for pk in held.selection["split"]["train"]}


def test_only_accepted_final_labels_are_trained_on(packaged, trainable):
    with pytest.raises(actions.RunError) as refused:
        actions.start_training(model=packaged, benchmark=trainable, settings=FAST, enqueue=False)
    assert refused.value.code == "no_items"
    accept_labels(trainable)
    Batch.objects.filter(campaign__protocol=Protocol.PRODUCTION).update(state=BatchState.IN_REVIEW)
    with pytest.raises(actions.RunError):
        actions.start_training(model=packaged, benchmark=trainable, settings=FAST, enqueue=False)
    with pytest.raises(actions.RunError) as bad:
        actions.start_training(model=packaged, benchmark=trainable, settings={"lerning_rate": 1}, enqueue=False)
    assert bad.value.code == "bad_settings" and "lerning_rate" in str(bad.value)


def classify_run(run):
    return EvalRun.objects.get(model__trained_by=run, mode=Mode.CLASSIFY)


def predictions_of(run):
    return {p.item_id: (p.answer, [round(v, 5) for v in p.probabilities["raw"].values()])
            for p in Prediction.objects.filter(run=run)}


def test_trained_classifier_beats_the_majority_class(packaged, trainable, capsys):
    accept_labels(trainable)
    call_command("train", "--benchmark", "dq-train", "--question", "score", "--seed", "3", "--sync",
                 *[arg for key, value in FAST.items() for arg in ("--set", f"{key}={json.dumps(value)}")])
    run = EvalRun.objects.get(mode=Mode.TRAIN)
    train = run.selection["split"]["train"]
    assert len(train) == 240 - 40 - 24 and run.chunks_done == run.chunks_total == 3  # 11 steps of 16, 4 a chunk
    assert run.state == RunState.FINISHED and run.items_done == len(train)
    steps = run.events.filter(kind="step")
    assert [e.figures["step"] for e in steps] == list(range(1, 12))
    assert run.events.filter(kind="validation").count() == 1 and run.events.filter(kind="checkpoint").count() == 3
    # The optimiser moments are kept for the next chunk to go on from; after the last, nothing trains on.
    assert [(checkpoint_dir(run, n) / OPTIMIZER_FILE).is_file() for n in range(3)] == [True, True, False]
    spec = ModelSpec.objects.get(trained_by=run)
    scored = classify_run(run)
    assert scored.state == RunState.FINISHED
    test_ids = run.selection["split"]["test"]
    rows = list(Prediction.objects.filter(run=scored))
    assert sorted(p.item_id for p in rows) == sorted(test_ids)
    assert not set(test_ids) & set(run.selection["split"]["train"])
    accuracy = sum(p.answer == run.selection["labels"][str(p.item_id)] for p in rows) / len(rows)
    assert accuracy > 18 / 40, accuracy  # the majority class ("2") is 18 of the 40 test items
    out = capsys.readouterr().out
    assert f"model {spec.name}" in out and "validation accuracy" in out

    # The report's DiQAD table has the trained classifier, on the test split, against gold.
    report = public(make_report("dq-train", None))
    row = next(r for r in report["ratings"]["models"] if r["run_id"] == scored.pk)
    assert row["n_gold"] == 40 and row["gold_accuracy"] == pytest.approx(accuracy)
    table = diqad_tables(report)[0]
    assert [c.text() for c in table.rows[0]][:2] == [row["model"], f"{100 * accuracy:.2f}"]


@pytest.mark.django_db(transaction=True)
def test_killed_worker_resumes_from_its_checkpoint_with_identical_results(start_worker, researcher, packaged,
                                                                         trainable):
    accept_labels(trainable)
    env = {"CELERY_VISIBILITY_TIMEOUT": "6"}
    first = start_worker("doomed-trainer", **env)
    answer = client_for(researcher).post("/api/v1/runs/train/", {
        "model": packaged.name, "benchmark": "dq-train", "seed": 11, "settings": FAST}, format="json")
    assert answer.status_code == 201, answer.content
    run_id = answer.json()["id"]

    def midway():
        run = EvalRun.objects.get(pk=run_id)
        running = run.chunks.filter(state=ChunkState.RUNNING, index__gte=1).first()
        return running if running and run.events.filter(kind="step", chunk=running).exists() else None

    victim = wait_for(midway, 300, "a chunk after the first one midway", [first])
    first.kill()
    time.sleep(max(0.0, victim.started_at.timestamp() + 7 - time.time()))
    second = start_worker("replacement-trainer", **env)
    run = wait_for(lambda: EvalRun.objects.filter(pk=run_id, state__in=["finished", "failed"]).first(), 300,
                   "the replacement to finish training", [first, second])
    assert run.state == RunState.FINISHED, run.reason
    victim.refresh_from_db()
    assert victim.attempts == 2 and victim.worker.startswith("replacement-trainer@")
    scored = wait_for(lambda: EvalRun.objects.filter(model__trained_by=run, state="finished").first(), 300,
                      "the test split to be classified", [second])

    reference = actions.start_training(model=packaged, benchmark=trainable, settings=FAST, seed=11, enqueue=False)
    assert runner.run_sync(reference).state == RunState.FINISHED
    assert reference.selection == run.selection
    reference_scored = runner.run_sync(classify_run(reference))
    assert ModelSpec.objects.get(trained_by=reference).sha256 == scored.model.sha256  # the same weights, bit for bit
    assert predictions_of(scored) == predictions_of(reference_scored)

    def losses(run):
        return [e.figures["loss"] for e in run.events.filter(kind="step").order_by("figures__step", "id")]

    assert sorted(set(losses(run))) == sorted(set(losses(reference)))
