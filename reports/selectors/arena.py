"""The arena's side of a report: pairwise judges' two steps per pair, and the whole dialogues behind the pairs
with the labels and single-dialogue verdicts they received."""
from __future__ import annotations

from django.db.models import Case, CharField, F, When
from django.db.models.fields.json import KT, KeyTextTransform, KeyTransform

from annotation.models import Annotation
from benchmarks.models import Item
from modeleval.models import EvalRun, ParseStatus, Prediction, RunState
from modeleval.modes import Section, modes_where
from studies.botchat import recipe as botchat

from ..forms import task_kind
from ..sections.selfchat import SELFCHAT_SETTINGS_SHOWN
from .items import item_queryset
from .reading import columns
from .runs import run_queryset


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
