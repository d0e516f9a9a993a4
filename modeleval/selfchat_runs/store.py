"""What a self-chat run writes: the run and its benchmark (task `selfchat`, created empty), then one item and one
prediction per seed; `_record` writes a finished run with dialogues made elsewhere in one go."""
from __future__ import annotations

import json
import uuid
from dataclasses import asdict

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from benchmarks.actions import add_tasks_and_items
from benchmarks.importers import ItemRecord, TaskSpec, mutual
from benchmarks.models import Benchmark, Item

from ..lifecycle import record
from ..models import EvalRun, Mode, ParseStatus, Prediction, RunEventKind, RunState
from .seeds import _source
from .settings import PROMPT_VERSIONS

TASK_SLUG = "selfchat"


def _create_run(model, selection, settings, user, **fields):
    """The run and its benchmark (task `selfchat`, no items yet), named after the run."""
    system_prompt = settings["system_prompt"]
    # The slug names the run, whose id exists only once the run (which needs its benchmark) is saved.
    benchmark = Benchmark.objects.create(slug=f"selfchat-pending-{uuid.uuid4().hex}", language="en",
                                         name=f"Self-chat of {model.name}",
                                         source=f"self-chat from the seeds in {_source(selection)}")
    add_tasks_and_items(benchmark, [TaskSpec(TASK_SLUG, "Self-chat: is any utterance machine-written?",
                                             mutual.JUDGEMENT_FORM, dimension="humanness",
                                             instructions=mutual.JUDGEMENT_INSTRUCTIONS)], [],
                        source=_source(selection))
    run = EvalRun.objects.create(
        model=model, benchmark=benchmark, mode=Mode.SELFCHAT, settings=settings, selection=selection,
        prompt_template=system_prompt, prompt_sha256=settings["system_prompt_sha256"],
        prompt_version=PROMPT_VERSIONS.get(system_prompt, "custom"), seed=settings.get("seed", 0), created_by=user,
        **fields)
    run.tasks.set([benchmark.tasks.get(slug=TASK_SLUG)])
    benchmark.slug = slugify(f"selfchat-{model.name[:70]}-{run.pk}")
    benchmark.version = str(run.pk)
    benchmark.save(update_fields=["slug", "version"])
    return run


@transaction.atomic
def _record(model, seeds_path, limit, settings, seeds, chats, loop_starts, started, seconds, user, tokens=None):
    """A finished run with its dialogues in one go (dialogues made elsewhere, e.g. by tests)."""
    selection = {key: value for key, value in (("seeds", str(seeds_path)), ("limit", limit)) if value is not None}
    run = _create_run(model, selection, settings, user, state=RunState.FINISHED, items_total=len(chats),
                      items_done=len(chats), chunks_total=0, chunks_done=0, started_at=started,
                      finished_at=timezone.now())
    _write(run, seeds, chats, loop_starts, tokens, str(seeds_path))
    record(run, RunEventKind.CREATED, actor=user, items=len(chats), model_sha256=model.sha256,
           prompt_sha256=run.prompt_sha256)
    record(run, RunEventKind.FINISHED, actor=user, items=len(chats), looping=sum(s is not None for s in loop_starts),
           seconds=seconds)
    return run


def _write(run, seeds, chats, loop_starts, tokens, source):
    """One item and one prediction per seed."""
    model, task = run.model, run.benchmark.tasks.get(slug=TASK_SLUG)
    tokens = tokens or [None] * len(chats)
    # seeds: (id, utterances[, length of the real dialogue]).
    records = [ItemRecord(TASK_SLUG, seed[0], mutual.turns(chat.utterances), {},
                          {"language": "en", "run": run.pk, "seed_id": seed[0], "model": model.name,
                           "seed_utterances": chat.seed_length, "loop_start": start,
                           **({"source_utterances": seed[2]} if len(seed) > 2 else {}),
                           **({"utterance_tokens": counts} if counts is not None else {})},
                          # Known by construction: everything after the seed is the model's.
                          {"is_ai": True, "first_ai_turn": chat.seed_length}, f"seed {seed[0]}")
               for seed, chat, start, counts in zip(seeds, chats, loop_starts, tokens, strict=True)]
    add_tasks_and_items(run.benchmark, [], records, source=source)
    item_ids = dict(Item.objects.filter(task=task).values_list("external_id", "pk"))
    Prediction.objects.bulk_create(
        Prediction(run=run, item_id=item_ids[seed_id], parse_status=ParseStatus.PARSED,
                   raw_output=json.dumps({"utterances": chat.utterances, "loop_start": start}, ensure_ascii=False),
                   options=[asdict(step) for step in chat.steps], answer="no_loop" if start is None else "loop")
        for (seed_id, *_), chat, start in zip(seeds, chats, loop_starts, strict=True))
