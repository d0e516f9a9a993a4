"""The seeds a self-chat run continues: the first utterances of real dialogues, from a MuTual-shaped file or from
a MuTual import already in the database; the run's selection names which."""
from __future__ import annotations

import itertools

from benchmarks.importers import ImportFailure, mutual
from benchmarks.models import Benchmark, Item
from core.errors import Code
from studies.botchat.recipe import SEED_UTTERANCES

from ..actions import RunError


def read_seeds(path, limit=None) -> list[tuple[str, list[str], int]]:
    """(id, first two utterances, utterances of the whole real dialogue) of the first `limit` dialogues of a
    MuTual-shaped file. The real length is kept: BotChat's arena uses only seeds of 4 utterances or more."""
    try:
        seeds = [(dialogue_id, utterances[:SEED_UTTERANCES], len(utterances))
                 for _, dialogue_id, utterances in itertools.islice(mutual.dialogues(path), limit)]
    except ImportFailure as error:
        raise RunError(Code.BAD_SEEDS, str(error)) from None
    if len({seed[0] for seed in seeds}) < len(seeds):
        raise RunError(Code.BAD_SEEDS, f"{path}: dialogue ids repeat; each seed needs its own id")
    return seeds


def seed_benchmarks():
    """The benchmarks whose real dialogues can seed a self-chat run: MuTual imports (`import_items --format
    mutual`, task `human-dialogue`)."""
    return Benchmark.objects.filter(tasks__slug=mutual.TASK_SLUG).distinct().order_by("slug")


def benchmark_seeds(benchmark, limit=None) -> list[tuple[str, list[str], int]]:
    """As `read_seeds`, from a MuTual import: (external id, first two utterances, utterances of the whole real
    dialogue) of its first `limit` dialogues in the order they were imported (the file's order)."""
    rows = (Item.objects.filter(task__benchmark=benchmark, task__slug=mutual.TASK_SLUG).order_by("pk")
            .values_list("external_id", "dialogue"))
    return [(external_id, [turn["text"] for turn in dialogue[:SEED_UTTERANCES]], len(dialogue))
            for external_id, dialogue in (rows[:limit] if limit is not None else rows)]


def _seeds(selection, limit):
    """The seeds a run's selection names: {"seeds": a file} or {"seeds_benchmark": a slug}."""
    if "seeds_benchmark" in selection:
        slug = selection["seeds_benchmark"]
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise RunError(Code.UNKNOWN_BENCHMARK, f"no benchmark {slug!r} to read seeds from")
        seeds = benchmark_seeds(benchmark, limit)
        if not seeds:
            raise RunError(Code.NO_ITEMS, f"benchmark {slug} holds no real dialogues to seed from (a MuTual import: "
                                       f"task {mutual.TASK_SLUG!r})")
        return seeds
    seeds = read_seeds(selection["seeds"], limit)
    if not seeds:
        raise RunError(Code.NO_ITEMS, f"{selection['seeds']} holds no seeds")
    return seeds


def _selection(seeds_path, seeds_benchmark, limit):
    if (seeds_path is None) == (seeds_benchmark is None):
        raise RunError(Code.BAD_SEEDS, "give the seeds either as a file or as a benchmark of real dialogues")
    source = ({"seeds_benchmark": getattr(seeds_benchmark, "slug", seeds_benchmark)} if seeds_benchmark is not None
              else {"seeds": str(seeds_path)})
    return {**source, **({"limit": limit} if limit is not None else {})}


def _source(selection):
    return (f"benchmark {selection['seeds_benchmark']}" if "seeds_benchmark" in selection
            else str(selection["seeds"]))
