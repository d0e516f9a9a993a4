"""The reads behind a report: one set-based query per table, whatever the number of items (14 for
a benchmark, 15 with a campaign), plus the few that choose the gold and say why (reports.gold).

Every function returns plain Python (dicts, lists, tuples) so that the report's builders never touch
the ORM. The row-heavy tables (items, gold labels, annotations, predictions) are values_list
querysets (`row_querysets`) read column-wise by `columns`: through COPY on PostgreSQL, through the
ORM elsewhere.
"""
from __future__ import annotations

import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import BooleanField, Case, CharField, ExpressionWrapper, F, Func, IntegerField, Q, When
from django.db.models.fields.json import KT, KeyTextTransform, KeyTransform

from annotation.importers import RATERS_ARE_POSITIONS
from annotation.models import (
    Annotation,
    Batch,
    BatchItem,
    Campaign,
    CampaignSettings,
    GoldLabel,
    GoldVersion,
    QCSampleItem,
)
from benchmarks.models import Benchmark, Item, Task
from core.errors import ActionError, Code
from modeleval.models import EvalRun, ParseStatus, Prediction, RunState
from modeleval.modes import Section, modes_where
from modeleval.scorers import botchat
from modeleval.scorers.choice_rules import Rule

from .contract import ReportData
from .forms import LABEL_TYPES, task_kind
from .gold import GoldChoice, GoldRefused, resolve_gold
from .provenance import code_version
from .sections.selfchat import SELFCHAT_SETTINGS_SHOWN


@dataclass(frozen=True)
class Scope:
    benchmark: Benchmark
    campaign: Campaign | None
    gold_version: GoldVersion | None  # None: the gold published with the data (item.source_gold)
    gold: GoldChoice | None = None  # which gold, chosen by whom and why (reports.gold)


def resolve_scope(benchmark_slug, campaign_id=None, gold_version=None) -> Scope:
    """The benchmark, optional campaign and the gold the report cites (see reports.gold.resolve_gold:
    the campaign's pinned gold, the benchmark's chosen gold, or the source gold; never a draft, never
    a gold derived from the labels it would score)."""
    benchmark = Benchmark.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        raise ActionError(Code.NOT_FOUND, f"no benchmark {benchmark_slug!r}")
    campaign = None
    if campaign_id not in (None, ""):
        campaign = Campaign.objects.filter(pk=campaign_id, benchmark=benchmark).select_related("pinned_gold").first()
        if campaign is None:
            raise ActionError(Code.NOT_FOUND, f"no campaign {campaign_id} in benchmark {benchmark_slug!r}")
    try:
        choice = resolve_gold(benchmark, campaign, gold_version)
    except LookupError as error:
        raise ActionError(Code.NOT_FOUND, str(error)) from None
    except GoldRefused as error:
        raise ActionError(Code.INVALID_SCOPE, str(error)) from None
    return Scope(benchmark, campaign, choice.version, choice)


def columns(queryset, copy=None):
    """The rows of a values_list queryset as {field name: list of values}, in one query.

    On PostgreSQL the rows travel by `COPY (SELECT ...) TO STDOUT` and are decoded column by column
    (JSON once per distinct value), which is several times faster than row-by-row ORM conversion
    for the hundreds of thousands of labels a large report reads; elsewhere, values_list.
    """
    return read_columns({"rows": queryset}, copy)["rows"]


def read_columns(querysets, copy=None):
    """`columns` of several values_list querysets ({name: queryset or None}), read in the order given. On PostgreSQL
    each table's text is decoded in a second thread while the next one is copied, so that decoding overlaps the
    database's work on the next query (the copies themselves run one after the other on this connection)."""
    present = {name: qs for name, qs in querysets.items() if qs is not None}
    if copy is None:
        copy = all(connections[qs.db].vendor == "postgresql" for qs in present.values())
    if not copy:
        out = {}
        for name, queryset in present.items():
            names = list(queryset.query.selected)  # the values_list order, annotations included
            rows = list(queryset)
            out[name] = ({field: list(values)
                          for field, values in zip(names, zip(*rows, strict=True), strict=True)} if rows
                         else {field: [] for field in names})
        return {name: out.get(name) for name in querysets}
    with ThreadPoolExecutor(max_workers=1) as decoder:
        decoded = {name: decoder.submit(_decoded, *_copied(queryset)) for name, queryset in present.items()}
        return {name: decoded[name].result() if name in decoded else None for name in querysets}


_ESCAPES = {b"\\\\": b"\\", b"\\n": b"\n", b"\\r": b"\r", b"\\t": b"\t", b"\\b": b"\b", b"\\f": b"\f",
            b"\\v": b"\v"}
_ESCAPE = re.compile(rb"\\[\\nrtbfv]")
_NULL = b"\\N"
INTEGER_TYPES = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField",
                 "PositiveIntegerField", "PositiveBigIntegerField", "PositiveSmallIntegerField"}


def _text(raw):
    """A COPY text field as str (COPY TO escapes only backslash and a few control characters)."""
    if b"\\" in raw:
        raw = _ESCAPE.sub(lambda m: _ESCAPES[m.group()], raw)
    return raw.decode("utf-8")


def _kind(field):
    kind = field.get_internal_type()
    if kind in ("ForeignKey", "OneToOneField"):
        kind = field.target_field.get_internal_type()
    if kind in INTEGER_TYPES:
        return "int"
    return {"FloatField": "float", "BooleanField": "bool", "JSONField": "json"}.get(kind, "text")


def _decode(kind, raw_column):
    """One COPY text column as Python values (NULL -> None)."""
    has_null = _NULL in raw_column
    if kind in ("int", "float") and not has_null:
        return list(map(int if kind == "int" else float, raw_column))
    if kind == "bool":
        return [None if raw == _NULL else raw == b"t" for raw in raw_column]
    decode = {"int": int, "float": float, "json": lambda raw: json.loads(_text(raw)), "text": _text}[kind]
    # Labels and ids repeat: decode each distinct text once (equal JSON values are then one shared
    # object: readers must not mutate them).
    cache = {_NULL: None}
    return [cache[raw] if raw in cache else cache.setdefault(raw, decode(raw)) for raw in raw_column]


def _copied(queryset):
    """(field names, their kinds, the COPY text) of a values_list queryset."""
    names = list(queryset.query.selected)  # the values_list order, annotations included
    compiler = queryset.query.get_compiler(using=queryset.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:  # a filter on an empty list (a benchmark without items): nothing to copy
        return names, None, b""
    kinds = [_kind(expression.output_field) for expression, _, _ in compiler.select]
    statement = f"COPY ({sql}) TO STDOUT"
    with connections[queryset.db].cursor() as cursor:
        buffer = io.BytesIO()
        # Logged like any query (debug_sql exists when queries are captured), so counts stay honest.
        logged = cursor.debug_sql(statement, params) if hasattr(cursor, "debug_sql") else nullcontext()
        with logged, cursor.cursor.copy(statement, params) as copy:
            for block in copy:
                buffer.write(block)
    return names, kinds, buffer.getvalue()


def _decoded(names, kinds, text):
    """COPY text as {field name: list of values}."""
    if not text:
        return {name: [] for name in names}
    # Tabs and newlines inside values are escaped, so one split yields every field in row order.
    fields = text[:-1].replace(b"\n", b"\t").split(b"\t")
    raw_columns = [fields[j::len(names)] for j in range(len(names))]
    return {name: _decode(kind, raw_column) for name, kind, raw_column in zip(names, kinds, raw_columns, strict=True)}


class AccPick(Func):
    """The key of the option with the highest summed log-probability (lm-eval `acc`; the first of
    equal maxima), read from Prediction.options in SQL so that the options never travel."""

    output_field = CharField()

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT o ->> 'key' FROM jsonb_array_elements({sql}) WITH ORDINALITY AS t(o, i) "
                f"ORDER BY (o ->> 'logprob')::float8 DESC NULLS LAST, i LIMIT 1)", params)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT json_extract(value, '$.key') FROM json_each({sql}) "
                f"ORDER BY json_extract(value, '$.logprob') IS NULL, json_extract(value, '$.logprob') DESC, key "
                f"LIMIT 1)", params)


class OptionCount(Func):
    """How many options an item offers: the keys of fields.options (0 when there are none)."""

    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(CASE WHEN jsonb_typeof({sql} -> 'options') = 'object' "
                f"THEN (SELECT count(*) FROM jsonb_object_keys({sql} -> 'options')) ELSE 0 END)", params * 2)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(CASE WHEN json_type({sql}, '$.options') = 'object' "
                f"THEN (SELECT count(*) FROM json_each({sql}, '$.options')) ELSE 0 END)", params * 2)


def label_questions(forms):
    """Keys of the questions that carry labels, over every task form, in form order."""
    keys = []
    for form in forms:
        keys += [q["key"] for q in form["questions"] if q["type"] in LABEL_TYPES and q["key"] not in keys]
    return keys


# ---------------------------------------------------------------- the queries

def task_rows(scope):
    tasks = Task.objects.filter(benchmark=scope.benchmark)
    if scope.campaign is not None:
        tasks = tasks.filter(campaigns=scope.campaign)
    return list(tasks.order_by("slug").values("id", "slug", "name", "dimension", "form"))


def item_queryset(scope, task_ids):
    items = Item.objects.filter(task_id__in=task_ids)
    if scope.campaign is not None:
        items = items.filter(batch_items__campaign=scope.campaign)
    return items.order_by()


def item_rows(scope, task_ids):
    fields = ["id", "task_id", "external_id", "content_hash", "domain", "n_options", "model_a", "model_b"]
    if scope.gold_version is None:
        fields.append("source_gold")
    return (item_queryset(scope, task_ids)
            .annotate(domain=KT("meta__domain"), n_options=OptionCount("fields"), model_a=KT("meta__model_a"),
                      model_b=KT("meta__model_b"))
            .values_list(*fields))


def gold_rows(scope, task_ids):
    """(item id, gold value) of the primary question from the frozen version; without one the
    source gold travels with the items."""
    return (GoldLabel.objects.filter(version=scope.gold_version, item__in=item_queryset(scope, task_ids).values("id"))
            .order_by().values_list("item_id", "value"))


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


def run_queryset(scope, task_ids):
    return (EvalRun.objects.filter(benchmark=scope.benchmark, state=RunState.FINISHED, tasks__in=task_ids)
            .distinct().order_by("id"))


def run_rows(scope, task_ids):
    runs = list(run_queryset(scope, task_ids).values(
        "id", "mode", "settings", "prompt_version", "prompt_sha256", "position_policy", "seed", "finished_at",
        "model__name", "model__source", "model__api_model", "model__sha256", "model__revision", "model__dtype",
        "model__trained_by__settings"))
    tasks = EvalRun.tasks.through.objects.filter(evalrun__in=run_queryset(scope, task_ids), task_id__in=task_ids)
    by_run = {}
    for run_id, task_id in tasks.values_list("evalrun_id", "task_id"):
        by_run.setdefault(run_id, []).append(task_id)
    for run in runs:
        run["task_ids"] = sorted(by_run.get(run["id"], []))
        run["finished_at"] = run["finished_at"].isoformat() if run["finished_at"] else None
    return runs


def prediction_rows(scope, task_ids):
    """Predictions of the runs in scope; `acc_pick` only where the run's own answer is not already
    lm-eval's acc (log-likelihood runs under another rule), as reading options is what costs."""
    runs = run_queryset(scope, task_ids)
    needs_pick = runs.filter(mode__in=modes_where(by_rule=True)).exclude(settings__rule=Rule.ACC).values("id")
    return (Prediction.objects.filter(run__in=runs, item__in=item_queryset(scope, task_ids).values("id"))
            .order_by()
            .annotate(acc_pick=Case(When(run__in=needs_pick, then=AccPick("options")), default=None,
                                    output_field=CharField()))
            .values_list("run_id", "item_id", "variant", "answer", "answer_norm", "answer_per_token", "acc_pick",
                         "parse_status", "gold", "rating"))


def pairwise_steps(scope, tasks):
    """Each pairwise judge's reading of both orders of showing (BotChat counts each order as a result of its
    own): per prediction, the label and the position of conversation A in each of its two steps, and the
    sources of the two conversations (an arena pair and its twin in the other order ask the same two questions);
    for a pair the loop detector decided, no steps and `decided`, its outcome for conversation A (BotChat counts
    it too: the looping dialogue loses, both looping is a tie). Only the labels travel, not the prompts and
    replies. None when the scope has no pairwise judge run."""
    task_ids = [t["id"] for t in tasks if task_kind(t["form"]) == "pairwise"]
    if not task_ids:
        return None
    runs = run_queryset(scope, task_ids).filter(mode__in=modes_where(section=Section.PAIRWISE))
    steps = (Prediction.objects.filter(run__in=runs, item__in=item_queryset(scope, task_ids).values("id"))
             .order_by("run_id", "item_id")
             .annotate(source_a=KeyTextTransform("source_a", "item__meta"),
                       source_b=KeyTextTransform("source_b", "item__meta"),
                       label_1=KT("options__0__label"), a_position_1=KT("options__0__a_position"),
                       label_2=KT("options__1__label"), a_position_2=KT("options__1__a_position"),
                       decided=Case(When(parse_status=ParseStatus.DECIDED, then=F("answer")), default=None,
                                    output_field=CharField()))
             .values_list("run_id", "item_id", "source_a", "source_b", "label_1", "a_position_1", "label_2",
                          "a_position_2", "decided"))
    return columns(steps, copy=False)


def arena_dialogues(scope, tasks):
    """The whole dialogues behind the scope's arena pairs (items whose meta names `source_a` and
    `source_b`), each with its system, and the current single-dialogue labels people gave them in
    any campaign ({is_ai, first_ai_turn}) and the per-N verdicts of single-dialogue judge runs: what
    pass@N and utterance lengths are computed from. Four queries, and none when the scope has no
    pairwise task."""
    task_ids = [t["id"] for t in tasks if task_kind(t["form"]) == "pairwise"]
    if not task_ids:
        return {}
    sides = (item_queryset(scope, task_ids).filter(meta__has_key="source_a")
             .annotate(source_a=KT("meta__source_a"), system_a=KT("meta__model_a"), source_b=KT("meta__source_b"),
                       system_b=KT("meta__model_b"))
             .values_list("source_a", "system_a", "source_b", "system_b"))
    system = {}
    for source_a, system_a, source_b, system_b in sides:
        system[int(source_a)], system[int(source_b)] = system_a, system_b
    items = Item.objects.filter(pk__in=system).order_by("id").values_list("id", "dialogue", "meta")
    dialogues = {"item_id": [], "system": [], "utterances": [], "seed_utterances": [], "loop_start": [],
                 "tokens": [], "run": []}
    for item_id, dialogue, meta in items:
        for key, value in (("item_id", item_id), ("system", system[item_id]),
                           ("utterances", [turn["text"] for turn in dialogue]),
                           # Real dialogues are measured after the two utterances a seed would take.
                           ("seed_utterances", botchat.seed_utterances(meta)),
                           ("loop_start", meta.get("loop_start")),
                           # Token counts of each utterance, kept by the self-chat run with its model's tokenizer.
                           ("tokens", meta.get("utterance_tokens")), ("run", meta.get("run"))):
            dialogues[key].append(value)
    # The self-chat runs' settings the figures name: which tokenizer counted.
    dialogues["runs"] = {run_id: {key: settings.get(key) for key in SELFCHAT_SETTINGS_SHOWN} for run_id, settings in
                         EvalRun.objects.filter(pk__in={r for r in dialogues["run"] if r is not None})
                         .values_list("id", "settings")}
    labels = (Annotation.objects.filter(item_id__in=system, superseded_at__isnull=True, excluded=False).order_by()
              .annotate(is_ai=KeyTransform("is_ai", "answers"), first_ai_turn=KeyTransform("first_ai_turn", "answers"))
              .values_list("item_id", "annotator_id", "is_ai", "first_ai_turn"))
    dialogues["labels"] = [row for row in labels if row[2] is not None]
    # Finished single-dialogue judge runs on these dialogues; the verdicts' prompts and replies are not kept.
    judged = (Prediction.objects.filter(item_id__in=system, run__mode__in=modes_where(section=Section.SINGLE_JUDGE),
                                        run__state=RunState.FINISHED)
              .order_by("run_id", "item_id").values_list("item_id", "run_id", "run__model__name", "options"))
    keys = ("n", "decided_by", "passed", "parsed", "readable")
    dialogues["judge_verdicts"] = [(item_id, run_id, model, [{key: v.get(key) for key in keys} for v in verdicts])
                                   for item_id, run_id, model, verdicts in judged]
    return dialogues


def answer_keys(tasks):
    """Label questions to read from Annotation.answers: all but a key that is every task's primary,
    whose answer is Annotation.value already."""
    primaries = {t["form"]["primary"] for t in tasks}
    shared_primary = primaries.pop() if len(primaries) == 1 else None
    return [key for key in label_questions(t["form"] for t in tasks) if key != shared_primary], shared_primary


def row_querysets(scope, tasks):
    """The row-heavy reads (items, gold, annotations, predictions): what a report costs grows with these."""
    task_ids = [t["id"] for t in tasks]
    return {"items": item_rows(scope, task_ids),
            "gold": gold_rows(scope, task_ids) if scope.gold_version else None,
            "annotations": annotation_rows(scope, task_ids, answer_keys(tasks)[0]),
            "predictions": prediction_rows(scope, task_ids)}


def report_data(scope, kept=None) -> ReportData:
    """Everything the report needs, in a fixed number of queries; `kept` (reports.kept_rows.KeptRows), when given,
    supplies the items and predictions it kept from an earlier computation where they have not changed."""
    tasks = task_rows(scope)
    task_ids = [t["id"] for t in tasks]
    querysets = row_querysets(scope, tasks)
    rows = kept.read(scope, task_ids, querysets) if kept is not None else read_columns(querysets)
    items = rows["items"]
    gold_version = scope.gold_version
    choice = scope.gold or GoldChoice(gold_version, "request" if gold_version else "source", "")
    return ReportData(
        benchmark={field: getattr(scope.benchmark, field)
                   for field in ("slug", "name", "version", "language", "source", "licence")},
        campaign_id=scope.campaign.pk if scope.campaign else None,
        gold_version=None if gold_version is None else {
            "number": gold_version.number, "citation": gold_version.citation, "campaign_id": gold_version.campaign_id,
            "frozen_at": gold_version.frozen_at.isoformat(), "note": gold_version.note},
        tasks=tasks,
        items=items,
        gold=dict(zip(*rows["gold"].values(), strict=True)) if rows["gold"] is not None else None,
        campaigns=campaign_rows(scope),
        batches=batch_rows(scope),
        annotations=annotation_columns(rows["annotations"], tasks),
        qc=qc_rows(scope),
        users=user_rows(scope),
        runs=run_rows(scope, task_ids),
        predictions=rows["predictions"],
        code=code_version(),
        dialogues=arena_dialogues(scope, tasks),
        pairwise_steps=pairwise_steps(scope, tasks),
        gold_choice=choice.describe(set(items["id"])),
        inclusion=inclusion_rows(scope),
    )


def inclusion_rows(scope):
    """item id -> the probability with which active selection drew it for labels (campaigns in scope)."""
    return dict(BatchItem.objects.filter(campaign__in=campaign_queryset(scope), inclusion_probability__isnull=False)
                .values_list("item_id", "inclusion_probability"))
