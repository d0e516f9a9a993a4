"""The report on N multiple-choice items x 3 raters x 3 models versus PostgreSQL COPY of the rows it reads.

    python perf/report_vs_copy.py [--items 100000] [--rounds 3] [--database-url postgres://postgres@127.0.0.1:5432/hb_perf_report]
    python perf/report_vs_copy.py --items 60 --repeat 1 --resamples 10   # tiny: does it run (not the report's figures)

The data (DialogBench-shaped: 12 tasks, 4 options; a human-baseline campaign of 3 raters in batches
of 2,000; a frozen gold version; two log-likelihood runs and one generation run) is written with
COPY into a database of its own, created and dropped here. The report side is the whole
`make_report` (every query, every statistic with 1,000 bootstrap resamples) plus its JSON text. The
COPY side is `COPY (SELECT ...) TO STDOUT` of the very SELECTs the report runs for its row-heavy
tables (items, gold labels, annotations, predictions), read to the end. Sides alternate; the best
run of each is compared. Then the stored report (reports.store): its first computation, its serving
through GET /api/v1/reports/, and its recomputation after one label changes (the items and predictions kept
from the computation before, reports.kept_rows), after a write that changes nothing, and after one prediction
changes (that run's predictions read again, the other runs' kept). A recompute also takes the figures of the tasks
the change did not touch from the computation before (reports.parts; `kept_parts_reused` counts them). Each
recompute takes turns with the COPY side `--rounds` times (default 3, the order swapped each round); each round is
printed as it ends, and the ratio reported is the median of the rounds' ratios. Prints one JSON line at the end,
with the machine's load average.
"""
import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LETTERS = "ABCD"
WORDS = ["the", "a", "to", "and", "of", "you", "it", "is", "that", "in", "we", "for", "on", "have", "with", "this",
         "be", "not", "are", "do", "at", "so", "but", "can", "was", "what", "about", "your", "just", "like", "if", "my",
         "me", "all", "they", "know", "get", "think", "there", "will", "one", "would", "go", "out", "up", "time"]


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def copy_rows(cursor, table, columns, rows):
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def generate(n_items, seed=11):
    """Write the benchmark, campaign, gold and runs; returns the benchmark slug."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from annotation import actions
    from annotation.models import Batch, GoldVersion
    from benchmarks.importers.dialogbench import TASKS, multiple_choice_form
    from benchmarks.models import Benchmark, Task, canonical_json, hash_of_encoded
    from modeleval.models import EvalRun, ModelSpec
    from modeleval.modes import reads
    from studies.vocabulary import Rule

    rng = random.Random(seed)
    now = timezone.now()
    User = get_user_model()
    boss = User.objects.create(username="perf-boss", is_staff=True)
    raters = [User.objects.create(username=f"perf-rater-{n}") for n in range(1, 4)]
    bench = Benchmark.objects.create(slug="perf-report", name="Report benchmark", language="en")
    tasks = [Task.objects.create(benchmark=bench, slug=slug, name=name, dimension=dim, form=multiple_choice_form())
             for slug, (name, dim) in TASKS.items()]
    raw = connection.cursor().cursor  # psycopg cursor under Django's wrapper

    gold = []

    def items():
        for n in range(n_items):
            answer = rng.choice(LETTERS)
            gold.append(answer)
            dialogue = [{"speaker": f"speaker{1 + t % 2}", "text": sentence(rng, 12)} for t in range(6)]
            fields = {"options": {k: sentence(rng, 8) for k in LETTERS}, "question": "Which option is right?"}
            meta = {"domain": f"domain-{n % 20}", "personality": {}}
            parts = [canonical_json(p) for p in (dialogue, fields, meta, {"answer": answer})]
            yield (tasks[n % len(tasks)].pk, f"perf-{n:06d}", *parts, hash_of_encoded(*parts), now)

    copy_rows(raw, "benchmarks_item", ["task_id", "external_id", "dialogue", "fields", "meta", "source_gold",
                                       "content_hash", "created_at"], items())
    raw.execute("SELECT id FROM benchmarks_item WHERE task_id = ANY(%s) ORDER BY external_id", [[t.pk for t in tasks]])
    item_ids = [row[0] for row in raw.fetchall()]

    campaign = actions.create_campaign(actor=boss, name="perf humans", benchmark=bench, protocol="human_baseline",
                                       settings={"overlap": 3, "items_per_task": None, "batch_size": 2000})
    settings = campaign.settings
    batch_size = settings.batch_size
    batches = Batch.objects.bulk_create([Batch(campaign=campaign, number=b + 1, state="accepted", settings=settings)
                                         for b in range(-(-n_items // batch_size))])
    copy_rows(raw, "annotation_batchitem",
              ["campaign_id", "batch_id", "item_id", "position", "needed", "taken", "status", "final_method",
               "labels", "labels_round"],  # no labels yet: the labels' COPY below counts them (annotation.label_counts)
              ((campaign.pk, batches[n // batch_size].pk, item, n % batch_size + 1, 3, 3, "labelled", "baseline", 0, 0)
               for n, item in enumerate(item_ids)))
    raw.execute("SELECT item_id, id FROM annotation_batchitem WHERE campaign_id = %s", [campaign.pk])
    batch_item = dict(raw.fetchall())

    def wrong(letter):
        return rng.choice([k for k in LETTERS if k != letter])

    def annotations():
        for item, answer in zip(item_ids, gold, strict=True):
            for slot, (rater, skill) in enumerate(zip(raters, (0.92, 0.87, 0.8), strict=True), start=1):
                value = answer if rng.random() < skill else wrong(answer)
                yield (campaign.pk, batch_item[item], item, rater.pk, 1, slot, settings.pk,
                       json.dumps({"answer": value}), json.dumps(value), False, "[]", rng.uniform(20, 90), now)

    copy_rows(raw, "annotation_annotation",
              ["campaign_id", "batch_item_id", "item_id", "annotator_id", "round", "slot", "settings_id", "answers",
               "value", "excluded", "excluded_by", "dwell_seconds", "submitted_at"], annotations())

    version = GoldVersion.objects.create(benchmark=bench, campaign=campaign, number=1, created_by=boss)
    copy_rows(raw, "annotation_goldlabel", ["version_id", "item_id", "value", "method", "votes", "margin"],
              ((version.pk, item, json.dumps(answer), "source", "{}", 0)
               for item, answer in zip(item_ids, gold, strict=True)))
    actions.freeze_gold_version(version, actor=boss)

    context = "Read the dialogue and answer the question.\n\n" + "\n".join(sentence(rng, 12) for _ in range(6))
    for name, mode, skill in (("perf-base-a", "loglikelihood", 0.7), ("perf-base-b", "loglikelihood", 0.55),
                              ("perf-chat", "generate", 0.6)):
        model = ModelSpec.objects.create(name=name, sha256=hashlib.sha256(name.encode()).hexdigest())
        by_rule = reads(mode).by_rule
        run_settings = {"rule": Rule.PER_TOKEN, "continuation": "text"} if by_rule else {}
        run = EvalRun.objects.create(model=model, benchmark=bench, mode=mode, settings=run_settings,
                                     prompt_template="t", prompt_sha256="0" * 64, prompt_version=f"{mode}/1",
                                     state="finished", items_total=n_items, items_done=n_items, finished_at=now)
        run.tasks.set(tasks)

        def predictions(run=run, skill=skill, by_rule=by_rule):
            for item, answer in zip(item_ids, gold, strict=True):
                # A preference for "A" gives the position-bias figures something to show.
                pick = answer if rng.random() < skill else ("A" if rng.random() < 0.4 else wrong(answer))
                if by_rule:
                    options = [{"key": k, "source_key": k, "text": sentence(rng, 8), "context": context,
                                "continuation": " " + sentence(rng, 8), "logprob": -rng.uniform(5, 30),
                                "n_tokens": 9, "n_chars": 40, "is_greedy": False} for k in LETTERS]
                    norm = wrong(answer) if rng.random() < 0.4 else answer
                    yield (run.pk, item, "", answer, json.dumps(options), "", "", pick, norm, pick, "scored",
                           pick == answer, "{}", "[]", "[]", now, now)
                else:
                    status = "unparsable" if rng.random() < 0.03 else "parsed"
                    pick = "" if status == "unparsable" else pick
                    options = [{"key": k, "source_key": k, "text": sentence(rng, 8)} for k in LETTERS]
                    yield (run.pk, item, "", answer, json.dumps(options), context, f"The answer is {pick}.", pick, "",
                           "", status, pick == answer, "{}", "[]", "[]", now, now)

        copy_rows(raw, "modeleval_prediction",
                  ["run_id", "item_id", "variant", "gold", "options", "prompt", "raw_output", "answer", "answer_norm",
                   "answer_per_token", "parse_status", "correct", "probabilities", "fewshot_ids", "api_calls",
                   "created_at", "updated_at"], predictions())
    raw.execute("ANALYZE")
    return bench.slug


def copy_side(slug):
    """COPY (SELECT ...) TO STDOUT of the report's own row queries; returns (seconds, bytes)."""
    from django.db import connection
    from psycopg import ClientCursor

    from reports.selectors import resolve_scope, row_querysets, task_rows

    scope = resolve_scope(slug)
    querysets = [qs for qs in row_querysets(scope, task_rows(scope)).values() if qs is not None]
    connection.ensure_connection()
    conn = connection.connection
    statements = [ClientCursor(conn).mogrify(*qs.query.sql_with_params()) for qs in querysets]
    started, size = time.perf_counter(), 0
    with conn.cursor() as cursor:
        for sql in statements:
            with cursor.copy(f"COPY ({sql}) TO STDOUT") as copy:
                for block in copy:
                    size += len(block)
    return time.perf_counter() - started, size


def report_side(slug, resamples):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reports.contract import ReportOptions
    from reports.render import render
    from reports.service import make_report

    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        report = make_report(slug, options=ReportOptions(n_resamples=resamples))
        text = render(report, "json")
    return time.perf_counter() - started, len(queries), report, len(text)


def stored_side(slug, repeat, resamples, n_rounds):
    """The stored report: computed as the `cpu` worker computes it (reports.store.compute, in this
    process), recomputed after a label changes, recomputed after a write that changes nothing (same
    input hashes: the figures are kept), and served through GET /api/v1/reports/ (Django's test client:
    authentication, access rules, rate limits, the stored row and its JSON) best of `repeat`. The recompute after a
    changed label alternates with the COPY side `n_rounds` times (each round's pair printed as it ends)."""
    from unittest import mock

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from annotation.models import Annotation
    from reports import store
    from reports.models import StoredReport

    user = get_user_model().objects.get(username="perf-boss")
    client = Client()
    client.force_login(user)
    times = {}

    import functools

    from reports import api
    from reports.contract import ReportOptions

    def get():
        started = time.perf_counter()
        # The API asks for the default resamples; --resamples stands in for that default here.
        with mock.patch.object(api, "ReportOptions", functools.partial(ReportOptions, n_resamples=resamples)):
            answer = client.get("/api/v1/reports/", {"benchmark": slug})
        return time.perf_counter() - started, answer

    from django.conf import settings
    settings.REPORTS_COMPUTE_IN_REQUEST = False  # queue only: the computation is timed below
    with mock.patch.object(store.current_app, "send_task"):
        _, answer = get()
    assert answer.status_code == 202, answer.status_code
    stored = StoredReport.objects.get()

    def compute():
        started = time.perf_counter()
        store.compute(stored.pk)
        return time.perf_counter() - started

    from reports.kept_rows import kept_rows
    times["first_compute"] = compute()
    times["kept_rows_mb"] = kept_rows.size_bytes() / 2**20
    serve = []
    for _ in range(repeat):
        seconds, answer = get()
        assert answer.status_code == 200, answer.status_code
        serve.append(seconds)
    times["served"], times["served_bytes"] = serve, len(answer.content)
    label = Annotation.objects.filter(campaign__benchmark__slug=slug).order_by("pk").first()
    values = (label.value, "D" if label.value != "D" else "C")

    def change_label(n):
        # Each round sets the label to the value the round before did not: every recompute sees a changed label.
        Annotation.objects.filter(pk=label.pk).update(value=values[(n + 1) % 2])  # the trigger marks it stale
        StoredReport.objects.filter(pk=stored.pk).update(state="queued")

    # The recompute after a change and the COPY floor take turns, the order swapped every round (recompute first in
    # odd rounds, COPY first in even ones), so that a busy neighbour slows both alike.
    def rounds_beside_copy(change, what):
        rounds = []
        for n in range(1, n_rounds + 1):
            timed = {}
            for side in (("recompute", "copy") if n % 2 else ("copy", "recompute")):
                if side == "recompute":
                    change(n)
                    timed[side] = compute()
                else:
                    timed[side] = copy_side(slug)[0]
            timed["ratio"] = timed["recompute"] / timed["copy"]
            timed["load"] = os.getloadavg()[0]
            print(f"round {n}: recompute after {what} {timed['recompute']:.2f} s, COPY {timed['copy']:.2f} s, "
                  f"ratio {timed['ratio']:.2f}, load {timed['load']:.2f}", flush=True)
            rounds.append(timed)
        return rounds

    rounds = rounds_beside_copy(change_label, "a label change")
    times["label_rounds"] = rounds
    try:
        from reports.parts import kept_parts
    except ImportError:  # the code before reports.parts (0daee12): the same script measures it, nothing kept
        times["kept_parts_mb"], times["kept_parts_reused"] = 0, 0
    else:
        times["kept_parts_mb"], times["kept_parts_reused"] = kept_parts.size_bytes() / 2**20, kept_parts.reused
    StoredReport.objects.filter(pk=stored.pk).update(state="queued")  # a write that changes nothing
    times["after_no_change"] = compute()
    # A changed prediction: that run's predictions are read again (the items and the other runs' predictions kept,
    # reports.kept_rows) and the figures of the task it touches computed again (reports.parts). `n_rounds` times,
    # taking turns with the COPY side as the label rounds do, each round's answer the one the round before did not
    # set: one run alone is no figure (runs of the same code differ by seconds at 100,000 items).
    from modeleval.models import Prediction
    prediction = Prediction.objects.filter(run__benchmark__slug=slug).order_by("pk").first()
    answers = ("B", "C") if prediction.answer != "B" else ("C", "D")

    def change_prediction(n):
        Prediction.objects.filter(pk=prediction.pk).update(answer=answers[n % 2])
        StoredReport.objects.filter(pk=stored.pk).update(state="queued")

    rounds = rounds_beside_copy(change_prediction, "a prediction change")
    times["prediction_rounds"] = rounds
    times["after_prediction_change"] = [r["recompute"] for r in rounds]
    times["runs_read"] = getattr(kept_rows, "runs_read", None)  # reports.kept_rows before it kept runs: none
    connection.close()
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="alternate the two sides this many times; best of each")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the recompute after a changed label alternating with COPY (median ratio), "
                             "then of the recompute after a changed prediction (median)")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--resamples", type=int, default=1000,
                        help="bootstrap resamples (the report's default: 1000; fewer only for a smoke run)")
    parser.add_argument("--database-url",
                        default=os.environ.get("PERF_DATABASE_URL",
                                               "postgres://postgres@127.0.0.1:5432/hb_perf_report"))
    args = parser.parse_args()

    from perf._services import drop_database, recreate_database
    recreate_database(args.database_url)

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    try:
        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        with transaction.atomic():
            slug = generate(args.items)
        generate_seconds = time.perf_counter() - started

        report_times, copy_times = [], []
        for _ in range(args.repeat):
            seconds, n_queries, report, json_chars = report_side(slug, args.resamples)
            report_times.append(seconds)
            seconds, copied = copy_side(slug)
            copy_times.append(seconds)
        stored = stored_side(slug, args.repeat, args.resamples, args.rounds)
        best_copy = min(copy_times)
        rounds = stored["label_rounds"]
        overall = report["multiple_choice"]["overall"]
        result = {
            "items": args.items,
            "annotations": 3 * args.items,
            "predictions": 3 * args.items,
            "report_seconds": round(min(report_times), 2),
            "copy_seconds": round(min(copy_times), 2),
            "ratio_report_over_copy": round(min(report_times) / min(copy_times), 2),
            "report_runs": [round(t, 2) for t in report_times],
            "copy_runs": [round(t, 2) for t in copy_times],
            "report_queries": n_queries,
            "copy_mb": round(copied / 1e6, 1),
            "report_json_kb": round(json_chars / 1e3),
            "bootstrap_resamples": report["options"]["n_resamples"],
            "human_majority": round(overall["human_majority"], 4),
            "model_accuracy": {m["model"]: round(m["accuracy"], 4) for m in overall["models"]},
            "generate_seconds": round(generate_seconds, 1),
            "stored_served_ms": round(1000 * min(stored["served"]), 1),
            "stored_served_runs_ms": [round(1000 * t, 1) for t in stored["served"]],
            "stored_served_kb": round(stored["served_bytes"] / 1e3),
            "stored_first_compute_seconds": round(stored["first_compute"], 2),
            "recompute_after_label_seconds": round(statistics.median(r["recompute"] for r in rounds), 2),
            "label_round_copy_seconds": round(statistics.median(r["copy"] for r in rounds), 2),
            "ratio_recompute_over_copy": round(statistics.median(r["ratio"] for r in rounds), 2),
            "label_rounds": [{k: round(v, 2) for k, v in r.items()} for r in rounds],
            "recompute_same_inputs_seconds": round(stored["after_no_change"], 2),
            "recompute_after_prediction_seconds": round(statistics.median(stored["after_prediction_change"]), 2),
            "recompute_after_prediction_runs": [round(t, 2) for t in stored["after_prediction_change"]],
            "kept_rows_rss_mb": round(stored["kept_rows_mb"]),
            "kept_parts_mb": round(stored["kept_parts_mb"], 1),
            "kept_parts_reused": stored["kept_parts_reused"],
            "ratio_recompute_prediction_over_copy": round(statistics.median(r["ratio"]
                                                                            for r in stored["prediction_rounds"]), 2),
            "prediction_round_copy_seconds": round(statistics.median(r["copy"] for r in stored["prediction_rounds"]),
                                                   2),
            "prediction_rounds": [{k: round(v, 2) for k, v in r.items()} for r in stored["prediction_rounds"]],
            "ratio_first_compute_over_copy": round(stored["first_compute"] / best_copy, 2),
            "kept_runs_read": stored["runs_read"],
            "ratio_same_inputs_over_copy": round(stored["after_no_change"] / best_copy, 2),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        print(json.dumps(result))
    finally:
        connection.close()
        if not args.keep:
            drop_database(args.database_url)


if __name__ == "__main__":
    main()
