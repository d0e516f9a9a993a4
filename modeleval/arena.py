"""BotChat arena (PROTOCOLS.md section 4 (b), (c)): pairs of dialogues grown from the same chat seed
by different self-chat runs, or a self-chat against the real dialogue of its seed, as the items of a
new benchmark that annotators label and a pairwise judge run scores.

Each item shows conversation 1 as its dialogue and conversation 2 in `fields.conversation_2`; who
wrote which is kept in `meta` (`model_a` for conversation 1, `model_b` for conversation 2, their
source items and loop starts), which annotators never receive. A looping dialogue is shown up to the
utterance that triggered the loop detector, as BotChat keeps it; against a real dialogue (one of 4 utterances or
more), both are cut to the same length first and the detector reads the cut dialogue, as BotChat runs DupDetect
on the dialogues it compares. Every pair is offered
in both orders by default (two items), and the item order is a seeded shuffle, so that external ids
tell nothing of the systems.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations

from django.db import transaction
from django.utils.text import slugify

import studies
from benchmarks.actions import add_tasks_and_items
from benchmarks.importers import ItemRecord, TaskSpec, mutual
from benchmarks.models import Benchmark, Item
from core.errors import Code
from studies import vocabulary
from studies.botchat import recipe as botchat

from . import bounds, modes, selectors
from .errors import RunError
from .models import EvalRun, RunState
from .modes.pairwise import SECOND
from .permissions import can_evaluate_models
from .scorers.loops import cut_at_loop, loop_start
from .selfchat_runs import TASK_SLUG as SELFCHAT_TASK

TASK_SLUG = "arena"
HUMAN = "human"  # the system name of real dialogues
# BotChat compares with the real dialogues of 4 chats or more (README.md lines 182 and 220: 222 of MuTual-Test's
# 547): two chats to compare after the seed's two.
GROUND_TRUTH_MIN_UTTERANCES = 4
# BotChat's arena (PairEval) uses the same 222 seeds: `make_pairs(min_source_utterances=4)` keeps the seeds whose
# real dialogue has that many utterances (self-chat runs record it as meta.source_utterances).
BOTCHAT_ARENA_MIN_UTTERANCES = GROUND_TRUTH_MIN_UTTERANCES
# BotChat (b): the picked conversation is the one judged to involve a machine (reports/forms.py
# reads "1" as a loss for conversation 1, "2" as its win, both/neither as a tie).
PAIRWISE_FORM = {
    "primary": "involves_ai",
    "questions": [
        {"key": "involves_ai", "type": "single_choice", "label": "Which conversation involves a machine?",
         "options": [{"value": label, "label": vocabulary.ANSWER_TEXT[label]} for label in vocabulary.LABELS]},
        {"key": "reason", "type": "text", "label": "Why?", "required": False},
    ],
}
PAIRWISE_INSTRUCTIONS = ("Read both conversations. Each may be between two people, or may include utterances "
                         "written by a machine. Say which conversation involves a machine: 1, 2, both or neither.")


@dataclass(frozen=True)
class Dialogue:
    system: str
    source: int  # the item holding the whole dialogue
    utterances: tuple[str, ...]
    loop_start: int | None
    # (measure, threshold, first utterance compared) of the run's loop detector; None for real dialogues, and for
    # runs that did not record it (their stored loop_start is then read).
    loop_rule: tuple[str, float, int] | None = None


@dataclass(frozen=True)
class Pair:
    seed_id: str
    first: Dialogue  # conversation 1
    second: Dialogue  # conversation 2


def system_pairs(systems: list[str], reference: str | None = None) -> list[tuple[str, str]]:
    """Every pair of systems, or the reference against each other one."""
    if reference is None:
        return list(combinations(systems, 2))
    if reference not in systems:
        raise ValueError(f"reference {reference!r} is not one of {systems}")
    return [(reference, other) for other in systems if other != reference]


def plan_pairs(dialogues: dict[str, dict[str, Dialogue]], *, reference: str | None = None, seed: int = 0,
               both_orders: bool = True) -> list[Pair]:
    """The pairs on the seeds every system has, in a seeded order. With `both_orders` each pair comes
    twice, once each way round; without it a seeded coin decides which side is conversation 1."""
    systems = list(dialogues)
    seeds = sorted(set.intersection(*(set(by_seed) for by_seed in dialogues.values())))
    rng = random.Random(f"arena:{seed}")
    pairs = []
    for seed_id in seeds:
        for x, y in system_pairs(systems, reference):
            a, b = dialogues[x][seed_id], dialogues[y][seed_id]
            if rng.random() < 0.5:
                a, b = b, a
            pairs.append(Pair(seed_id, a, b))
            if both_orders:
                pairs.append(Pair(seed_id, b, a))
    rng.shuffle(pairs)
    return pairs


def evaluated(pair: Pair) -> tuple[list[str], list[str], int | None, int | None]:
    """(utterances shown as conversation 1, as conversation 2, loop start of each that counts).

    A loop counts when the detector finds it within what is compared; the dialogue is cut after the utterance
    that triggered it (`loops.cut_at_loop`), as its repeats would give it away at once. Against a real dialogue
    both sides are compared at the same length, and the detector reads the generated side at that length."""
    same_length = HUMAN in (pair.first.system, pair.second.system)
    limit = min(len(pair.first.utterances), len(pair.second.utterances)) if same_length else None

    def cut(dialogue):
        shown = list(dialogue.utterances[:limit])
        if same_length and dialogue.loop_rule is not None:
            similarity, threshold, first = dialogue.loop_rule
            loop = loop_start(shown, similarity=similarity, threshold=threshold, first=first)
        else:
            loop = dialogue.loop_start if dialogue.loop_start is not None and dialogue.loop_start < len(shown) else None
        return cut_at_loop(shown, loop), loop

    (one, loop_one), (two, loop_two) = cut(pair.first), cut(pair.second)
    if same_length:
        n = min(len(one), len(two))
        one, two = one[:n], two[:n]
    return one, two, loop_one, loop_two


# --- writes ------------------------------------------------------------------------------


def run_labels(runs) -> dict[int, str]:
    """A system name per run (`selectors.run_labels`)."""
    return selectors.run_labels((run.pk, run.model.name, run.mode) for run in runs)


def _run_dialogues(run, label, min_source_utterances=None) -> dict[str, Dialogue]:
    """The run's dialogues by seed id; with `min_source_utterances`, only those whose seed's real dialogue has at
    least that many utterances."""
    items = list(Item.objects.filter(task__benchmark=run.benchmark, task__slug=SELFCHAT_TASK).order_by("external_id"))
    if min_source_utterances is not None:
        if any("source_utterances" not in item.meta for item in items):
            raise RunError(Code.BAD_SETTINGS, f"run {run.pk} did not record the length of its seeds' real dialogues "
                                           "(a run made before it was recorded): run it again to pair by length")
        items = [item for item in items if item.meta["source_utterances"] >= min_source_utterances]
    settings = run.settings or {}
    rule = ((settings["loop_similarity"], settings["loop_threshold"]) if "loop_similarity" in settings
            and "loop_threshold" in settings else None)
    return {item.meta["seed_id"]: Dialogue(label, item.pk, tuple(t["text"] for t in item.dialogue),
                                           item.meta.get("loop_start"),
                                           None if rule is None else (*rule, botchat.seed_utterances(item.meta)))
            for item in items}


def _real_dialogues(benchmark) -> dict[str, Dialogue]:
    items = Item.objects.filter(task__benchmark=benchmark, task__slug=mutual.TASK_SLUG).order_by("external_id")
    return {item.external_id: Dialogue(HUMAN, item.pk, tuple(t["text"] for t in item.dialogue), None)
            for item in items if len(item.dialogue) >= GROUND_TRUTH_MIN_UTTERANCES}


def _check_runs(runs):
    for run in runs:
        if not modes.plan(run.mode).writes_dialogues or run.state != RunState.FINISHED:
            raise RunError(Code.NOT_SELFCHAT, f"run {run.pk} is a {run.state} {run.mode} run; pairs are built from "
                                           "finished self-chat runs")
    if len({run.pk for run in runs}) < len(runs):
        raise RunError(Code.BAD_SETTINGS, "a run is named twice")


@transaction.atomic
def make_pairs(*, runs, reference=None, ground_truth=None, seed=0, both_orders=True, benchmark_slug=None,
               user=None, min_source_utterances=None) -> Benchmark:
    """A new benchmark of arena items from self-chat `runs` (EvalRuns or ids) and, with
    `ground_truth` (the slug of a MuTual import), the real dialogues of their seeds as system
    "human". `reference` (a run, its id, or "human") meets every other system; without it every
    pair of systems meets. `min_source_utterances` keeps the seeds whose real dialogue is at least that long
    (BotChat's arena: BOTCHAT_ARENA_MIN_UTTERANCES, its 222 seeds of MuTual-Test); when every run follows the
    botchat preset it is that unless given (1 takes every seed). `user`, when given, must be
    one who may run models (`permissions.can_evaluate_models`). One transaction: a refusal writes nothing."""
    if user is not None and not can_evaluate_models(user):
        raise RunError(Code.FORBIDDEN, "arena pairs are built by staff and researchers")
    bounds.check({"min_source_utterances": min_source_utterances, "seed": seed}, bounds.ARENA)
    runs = [run if isinstance(run, EvalRun) else EvalRun.objects.filter(pk=run).first() for run in runs]
    if None in runs:
        raise RunError(Code.UNKNOWN_RUN, "no such run")
    _check_runs(runs)
    labels = run_labels(runs)
    arenas = {getattr(studies.recipe(run.settings, run.mode), "arena_min_utterances", None) for run in runs}
    if min_source_utterances is None and len(arenas) == 1 and None not in arenas:
        # The study's arena where every run follows it: the botchat preset's is BotChat's, the 222 seeds of
        # MuTual-Test whose real dialogue has 4 chats or more.
        min_source_utterances = arenas.pop()
    dialogues = {labels[run.pk]: _run_dialogues(run, labels[run.pk], min_source_utterances) for run in runs}
    if ground_truth is not None:
        real = Benchmark.objects.filter(slug=ground_truth).first()
        if real is None:
            raise RunError(Code.UNKNOWN_BENCHMARK, f"no benchmark {ground_truth!r} (import the MuTual file first)")
        if HUMAN in dialogues:
            raise RunError(Code.BAD_SETTINGS, f"a model named {HUMAN!r} cannot meet the real dialogues")
        dialogues[HUMAN] = _real_dialogues(real)
    if len(dialogues) < 2:
        raise RunError(Code.BAD_SETTINGS, "pairs need two systems: two runs, or a run and ground truth")
    if isinstance(reference, (EvalRun, int)) or (isinstance(reference, str) and reference.isdigit()):
        reference = labels.get(getattr(reference, "pk", None) or int(reference))
        if reference is None:
            raise RunError(Code.BAD_SETTINGS, "the reference run is not one of the runs")
    if reference is not None and reference not in dialogues:
        raise RunError(Code.BAD_SETTINGS, f"reference {reference!r} is not one of {sorted(dialogues)}")
    pairs = plan_pairs(dialogues, reference=reference, seed=seed, both_orders=both_orders)
    if not pairs:
        raise RunError(Code.NO_ITEMS, "the runs share no seed")
    for pair in pairs:
        if pair.first.utterances[:botchat.SEED_UTTERANCES] != pair.second.utterances[:botchat.SEED_UTTERANCES]:
            raise RunError(Code.SEEDS_DIFFER, f"seed {pair.seed_id}: {pair.first.system} and {pair.second.system} "
                                           "start from different utterances; pair runs made from the same seeds")

    records, identical = [], 0
    for pair in pairs:
        one, two, loop_one, loop_two = evaluated(pair)
        if one == two:
            # BotChat drops a comparison whose two conversations are the same text (analyze.py's "EM"):
            # nothing tells them apart, so any verdict would be noise.
            identical += 1
            continue
        meta = {"language": "en", "seed_id": pair.seed_id, "model_a": pair.first.system,
                "model_b": pair.second.system, "source_a": pair.first.source, "source_b": pair.second.source,
                "loop_a": loop_one, "loop_b": loop_two,
                # One side is a real dialogue: BotChat's judge is then told only one involves AI (GTEval).
                "versus_ground_truth": HUMAN in (pair.first.system, pair.second.system)}
        n = len(records) + 1
        records.append(ItemRecord(TASK_SLUG, f"p{n:04d}", mutual.turns(one), {SECOND: mutual.turns(two)}, meta,
                                  None, f"pair {n}"))
    if not records:
        raise RunError(Code.NO_ITEMS, f"all {identical} pairs show the same conversation twice")

    slug = benchmark_slug or slugify(f"arena-{'-'.join(str(run.pk) for run in runs)}-seed-{seed}")
    if Benchmark.objects.filter(slug=slug).exists():
        raise RunError(Code.BENCHMARK_EXISTS, f"benchmark {slug!r} exists already; pick another slug")
    benchmark = Benchmark.objects.create(
        slug=slug, name=f"Arena of {', '.join(sorted(dialogues))}", language="en", version=str(seed),
        source=f"pairs of the self-chat runs {[run.pk for run in runs]}"
               + (f" and the real dialogues of {ground_truth}" if ground_truth else ""),
        description=f"seed {seed}; {'every pair' if reference is None else f'{reference} against each'}; "
                    f"{'both orders' if both_orders else 'one seeded order'} per pair; "
                    + (f"seeds whose real dialogue has {min_source_utterances} utterances or more; "
                       if min_source_utterances is not None else "every seed; ")
                    + f"{identical} pair(s) showing the same conversation twice left out")
    task = TaskSpec(TASK_SLUG, "Arena: which conversation involves a machine?", PAIRWISE_FORM, dimension="humanness",
                    instructions=PAIRWISE_INSTRUCTIONS)
    add_tasks_and_items(benchmark, [task], records, source=slug)
    return benchmark
