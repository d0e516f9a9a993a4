"""BotChat's released dialogues (open-compass/BotChat, `MuTualTest-convs.tsv`, fetched by its data/BrowseData.ipynb):
the conversations its 14 models generated from MuTual-Test's 547 seeds, imported as finished self-chat runs, one
per model column, so that they are judged, paired (`arena.make_pairs`, against each other, the real dialogues or
runs made here on the same seeds) and reported like dialogues generated here.

The file is tab-separated with a header: `index` (the seed's MuTual id, "MT-1"), optionally `nround`, and one
column per model whose cell is the JSON list of the dialogue's chats, the seed's two first (README.md lines
102-121). Each model becomes a ModelSpec named `botchat-<column>` whose source names the file and the column: it
holds dialogues, never weights, so it cannot score or self-chat. The seeds' real lengths come from a MuTual import
of the same ids (`seeds_benchmark`), as self-chat runs record them, so that the arena keeps BotChat's 222 seeds.
Loops are found by our detector (`scorers.loops`) with its default measure and threshold. One transaction: a
malformed file writes nothing, and the error names the file, line and column.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from benchmarks.importers import ImportFailure, mutual
from benchmarks.models import Benchmark, Item
from core.errors import Code
from studies.botchat import recipe as botchat
from studies.botchat.recipe import SEED_UTTERANCES

from .actions import source_sha256
from .errors import RunError
from .models import ModelSpec
from .permissions import can_evaluate_models
from .scorers import loops, selfchat_generation
from .selfchat_runs import resolve_settings
from .selfchat_runs.store import _record

SOURCE = f"{botchat.SOURCE} MuTualTest-convs.tsv"
RELEASED = ModelSpec.RELEASED  # the source prefix of a model that holds released dialogues only
INDEX, NOT_MODELS = "index", {"index", "nround", "", "Unnamed: 0"}
COLUMN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+-]{0,99}")


def read_columns(path, models=None) -> dict[str, list[tuple[int, str, list[str]]]]:
    """{model column: [(line, seed id, chats)]} of the file, every cell checked: a JSON list of at least 2
    non-empty strings starting from the seed's id. `models` keeps those columns only."""
    csv.field_size_limit(1 << 26)
    if not Path(path).is_file():
        raise ImportFailure(path, None, None, "no such file")
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        header = reader.fieldnames or []
        if INDEX not in header:
            raise ImportFailure(path, "line 1", INDEX, f"a tab-separated header with {INDEX!r}, got {header[:5]}")
        columns = [c for c in header if c not in NOT_MODELS]
        if models:
            if unknown := sorted(set(models) - set(columns)):
                raise ImportFailure(path, "line 1", ", ".join(unknown), f"model columns among {columns}")
            columns = [c for c in columns if c in set(models)]
        if not columns:
            raise ImportFailure(path, "line 1", "header", "at least one model column beside index")
        if bad := [c for c in columns if not COLUMN_NAME.fullmatch(c)]:
            # The column names the model, its source and its runs: no markup, no path, nothing a page or a file
            # name could mistake for something else.
            raise ImportFailure(path, "line 1", "header", f"model column names of letters, digits, spaces, '.', "
                                                          f"'_', '+' or '-' (at most 100), starting with a letter "
                                                          f"or a digit; got {', '.join(map(ascii, bad))}")
        found = {column: [] for column in columns}
        seen = set()
        for line, row in enumerate(reader, start=2):
            seed_id = (row.get(INDEX) or "").strip()
            if not seed_id or seed_id in seen:
                raise ImportFailure(path, f"line {line}", INDEX, "a seed id given once")
            seen.add(seed_id)
            for column in columns:
                try:
                    chats = json.loads(row.get(column) or "")
                except ValueError:
                    chats = None
                if not (isinstance(chats, list) and len(chats) >= SEED_UTTERANCES
                        and all(isinstance(c, str) and c.strip() for c in chats)):
                    raise ImportFailure(path, f"line {line}", column, "a JSON list of at least 2 non-empty chats")
                found[column].append((line, seed_id, chats))
    return found


def model_for(column, path, sha) -> ModelSpec:
    """The ModelSpec standing for one model column of the released file (made once; the same file again reuses
    it, another file under the same name is refused)."""
    name = slugify(f"botchat-{column}")[:100]
    source = f"{RELEASED}{SOURCE}#{column}"
    spec = ModelSpec.objects.filter(name=name).first()
    if spec is None:
        return ModelSpec.objects.create(name=name, source=source, sha256=sha,
                                        revision=f"BotChat's released dialogues, column {column}"[:100])
    if spec.source != source or spec.sha256 != sha:
        raise RunError(Code.MODEL_EXISTS, f"a model named {name!r} is registered already and is not column {column} of "
                                       f"this file (sha256 {sha[:12]})")
    return spec


@transaction.atomic
def import_released(path, *, seeds_benchmark, models=None, limit=None, user=None):
    """The released dialogues of `path` as finished self-chat runs (one per model column, `models` only when
    given, the first `limit` seeds), the real lengths of the seeds read from `seeds_benchmark` (the slug of a
    MuTual import holding every seed id of the file). Returns the runs."""
    if user is not None and not can_evaluate_models(user):
        raise RunError(Code.FORBIDDEN, "released dialogues are imported by staff and researchers")
    path = Path(path)
    real = Benchmark.objects.filter(slug=seeds_benchmark).first()
    if real is None:
        raise RunError(Code.UNKNOWN_BENCHMARK, f"no benchmark {seeds_benchmark!r} (import the MuTual file first)")
    lengths = {external_id: len(dialogue) for external_id, dialogue in
               Item.objects.filter(task__benchmark=real, task__slug=mutual.TASK_SLUG)
               .values_list("external_id", "dialogue")}
    columns = read_columns(path, models)
    sha = source_sha256(str(path))
    runs = []
    for column, rows in columns.items():
        rows = rows[:limit] if limit is not None else rows
        if missing := [(line, seed_id) for line, seed_id, _ in rows if seed_id not in lengths]:
            line, seed_id = missing[0]
            raise ImportFailure(path, f"line {line}", INDEX, f"a seed id of {seeds_benchmark}; {seed_id!r} is not "
                                                             f"one ({len(missing)} such ids)")
        spec = model_for(column, path, sha)
        if done := spec.runs.filter(settings__sha256=sha).first():
            raise RunError(Code.DUPLICATE, f"column {column} of this file is run {done.pk} already")
        chats = [selfchat_generation.SelfChat(list(utterances), SEED_UTTERANCES) for _, _, utterances in rows]
        seeds = [(seed_id, utterances[:SEED_UTTERANCES], lengths[seed_id]) for _, seed_id, utterances in rows]
        settings = resolve_settings(preset=botchat.PRESET)
        # Generated by the study, not here: only what names the dialogues and our loop detector is kept.
        settings = {key: settings[key] for key in ("preset", "system_prompt", "system_prompt_sha256",
                                                   "seed_utterances", "loop_similarity", "loop_threshold", "seed")}
        settings.update(released=SOURCE, column=column, sha256=sha, token_counter=None)
        loop_starts = [loops.loop_start(chat.utterances, similarity=settings["loop_similarity"],
                                        threshold=settings["loop_threshold"], first=SEED_UTTERANCES) for chat in chats]
        runs.append(_record(spec, path, limit, settings, seeds, chats, loop_starts, timezone.now(), 0.0, user))
    return runs
