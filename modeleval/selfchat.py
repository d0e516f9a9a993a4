"""Self-chat runs (BotChat): a registered model continues human chat seeds, and the dialogues it
writes become items to be judged.

The dialogues are generated first, outside any transaction (minutes on a CPU); one transaction
then writes the run (mode `selfchat`, state finished), its benchmark `selfchat-<model>-<run id>`
with one item per dialogue in task `selfchat`, and one prediction per seed: `raw_output` is the
dialogue as JSON ({"utterances", "loop_start"}), `options` holds each generated utterance's step
({index, prompt, dropped, reply, text}: the exact prompt, the oldest turns left out of it, the
decoded reply and the utterance kept), `answer` is "loop" or "no_loop". Each item's meta keeps the
token count of every utterance under the run model's tokenizer (`utterance_tokens`). A failure writes
nothing.

Settings default to ours (greedy, a short reply cut at its first newline); `preset="botchat"` takes the
study's (`scorers.botchat.SELFCHAT_SETTINGS`), and any setting given explicitly wins over either.
"""
from __future__ import annotations

import itertools
import json
import time
import uuid
from dataclasses import asdict

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from benchmarks.actions import add_tasks_and_items
from benchmarks.importers import ImportFailure, ItemRecord, TaskSpec, mutual
from benchmarks.models import Benchmark, Item

from . import inference
from .actions import RunError
from .lifecycle import record
from .models import EvalRun, Mode, ModelSpec, ParseStatus, Prediction, RunEventKind, RunState
from .scorers import botchat, loops, selfchat
from .scorers.generation import DECODINGS
from .scorers.prompts import template_hash

SEED_UTTERANCES = 2  # BotChat: the first two utterances of a real dialogue
TASK_SLUG = "selfchat"
# System prompt text -> its version (change the text, change the version); any other text is "custom".
PROMPT_VERSIONS = {selfchat.DEFAULT_SYSTEM_PROMPT: "selfchat-system-en/1",
                   botchat.SELFCHAT_SYSTEM_PROMPT: "botchat-selfchat-system-en/1"}
DEFAULTS = {"utterances": selfchat.DEFAULT_UTTERANCES, "system_prompt": selfchat.DEFAULT_SYSTEM_PROMPT,
            "max_new_tokens": selfchat.DEFAULT_MAX_NEW_TOKENS, "decoding": selfchat.DEFAULT_DECODING,
            "reply_cut": selfchat.DEFAULT_REPLY_CUT}
PRESETS = {botchat.PRESET: botchat.SELFCHAT_SETTINGS}


def read_seeds(path, limit=None) -> list[tuple[str, list[str], int]]:
    """(id, first two utterances, utterances of the whole real dialogue) of the first `limit` dialogues of a
    MuTual-shaped file. The real length is kept: BotChat's arena uses only seeds of 4 utterances or more."""
    try:
        seeds = [(dialogue_id, utterances[:SEED_UTTERANCES], len(utterances))
                 for _, dialogue_id, utterances in itertools.islice(mutual.dialogues(path), limit)]
    except ImportFailure as error:
        raise RunError("bad_seeds", str(error)) from None
    if len({seed[0] for seed in seeds}) < len(seeds):
        raise RunError("bad_seeds", f"{path}: dialogue ids repeat; each seed needs its own id")
    return seeds


def resolve_settings(*, preset="", utterances=None, system_prompt=None, max_new_tokens=None, decoding=None,
                     reply_cut=None, similarity=loops.DEFAULT_SIMILARITY, threshold=loops.DEFAULT_THRESHOLD,
                     batch_size=32, seed=0):
    """The run's settings: ours, or the preset's, with every setting given (not None) on top."""
    if preset and preset not in PRESETS:
        raise RunError("bad_settings", f"unknown self-chat preset {preset!r}; expected one of {sorted(PRESETS)}")
    given = {"utterances": utterances, "system_prompt": system_prompt, "max_new_tokens": max_new_tokens,
             "decoding": decoding, "reply_cut": reply_cut}
    chosen = {**DEFAULTS, **PRESETS.get(preset, {}), **{k: v for k, v in given.items() if v is not None}}
    if chosen["utterances"] <= SEED_UTTERANCES or chosen["max_new_tokens"] < 1 or batch_size < 1:
        raise RunError("bad_settings", f"utterances must exceed the {SEED_UTTERANCES} of the seed; "
                                       "max_new_tokens and batch_size must be positive")
    if chosen["decoding"] not in DECODINGS or chosen["reply_cut"] not in selfchat.REPLY_CUTS:
        raise RunError("bad_settings", f"decoding must be one of {DECODINGS} and reply_cut one of "
                                       f"{selfchat.REPLY_CUTS}")
    if similarity not in loops.SIMILARITIES or not 0 < threshold <= 1:
        raise RunError("bad_settings", f"loop similarity must be one of {sorted(loops.SIMILARITIES)} "
                                       "and its threshold in (0, 1]")
    return {**chosen, "preset": preset, "seed_utterances": SEED_UTTERANCES,
            "system_prompt_sha256": template_hash(chosen["system_prompt"]), "loop_similarity": similarity,
            "loop_threshold": threshold, "batch_size": batch_size, "seed": seed}


def run_selfchat(*, model: ModelSpec, seeds_path, limit=None, preset="", utterances=None, system_prompt=None,
                 max_new_tokens=None, decoding=None, reply_cut=None, similarity=loops.DEFAULT_SIMILARITY,
                 threshold=loops.DEFAULT_THRESHOLD, batch_size=32, seed=0, user=None) -> EvalRun:
    """Generate a dialogue from each seed of `seeds_path` (the first `limit`) and record them."""
    if limit is not None and limit < 1:
        raise RunError("bad_settings", "limit must be positive")
    if model.is_api:
        raise RunError("mode_unsupported", f"model {model.name}: self-chat through an API endpoint is not "
                                           "implemented; run it with a local model")
    settings = resolve_settings(preset=preset, utterances=utterances, system_prompt=system_prompt,
                                max_new_tokens=max_new_tokens, decoding=decoding, reply_cut=reply_cut,
                                similarity=similarity, threshold=threshold, batch_size=batch_size, seed=seed)
    utterances, system_prompt = settings["utterances"], settings["system_prompt"]
    seeds = read_seeds(seeds_path, limit)
    if not seeds:
        raise RunError("no_items", f"{seeds_path} holds no seeds")
    try:
        loaded = inference.load(model)
    except inference.PermanentError as error:
        raise RunError("model_mismatch", str(error)) from None
    # The run states what the prompts were built with, so `render_prompt` can rebuild each one.
    # The study counted tokens with GPT-4's CL100K, which cannot be installed here: the run model's tokenizer
    # stands in, named on the run.
    settings.update(max_length=model.max_length or loaded.info.max_length, chat_template=model.chat_template,
                    use_chat=bool(model.use_chat_template and (model.chat_template or loaded.info.has_chat_template)),
                    token_counter=f"tokenizer of {model.name}")
    started, clock = timezone.now(), time.perf_counter()
    chats = selfchat.self_chat(
        loaded.model, loaded.tokenizer, [seed[1] for seed in seeds], utterances=utterances,
        system=system_prompt, max_new_tokens=settings["max_new_tokens"], max_length=settings["max_length"],
        chat_template=model.chat_template or None, use_chat=settings["use_chat"], batch_size=batch_size,
        decoding=settings["decoding"], reply_cut=settings["reply_cut"], sampling_seed=seed)
    loop_starts = [loops.loop_start(chat.utterances, similarity=similarity, threshold=threshold,
                                    first=chat.seed_length) for chat in chats]
    tokens = [selfchat.token_counts(loaded.tokenizer, chat.utterances) for chat in chats]
    return _record(model, seeds_path, limit, settings, seeds, chats, loop_starts, started,
                   round(time.perf_counter() - clock, 1), user, tokens)


@transaction.atomic
def _record(model, seeds_path, limit, settings, seeds, chats, loop_starts, started, seconds, user, tokens=None):
    system_prompt = settings["system_prompt"]
    # The slug names the run, whose id exists only once the run (which needs its benchmark) is saved.
    benchmark = Benchmark.objects.create(slug=f"selfchat-pending-{uuid.uuid4().hex}", language="en",
                                         name=f"Self-chat of {model.name}",
                                         source=f"self-chat from the seeds in {seeds_path}")
    add_tasks_and_items(benchmark, [TaskSpec(TASK_SLUG, "Self-chat: is any utterance machine-written?",
                                             mutual.JUDGEMENT_FORM, dimension="humanness",
                                             instructions=mutual.JUDGEMENT_INSTRUCTIONS)], [], source=seeds_path)
    task = benchmark.tasks.get(slug=TASK_SLUG)
    run = EvalRun.objects.create(
        model=model, benchmark=benchmark, mode=Mode.SELFCHAT, settings=settings,
        selection={key: value for key, value in (("seeds", str(seeds_path)), ("limit", limit)) if value is not None},
        prompt_template=system_prompt, prompt_sha256=settings["system_prompt_sha256"],
        prompt_version=PROMPT_VERSIONS.get(system_prompt, "custom"), seed=settings.get("seed", 0),
        state=RunState.FINISHED, items_total=len(chats), items_done=len(chats), chunks_total=0, chunks_done=0,
        created_by=user, started_at=started, finished_at=timezone.now())
    run.tasks.set([task])
    benchmark.slug = slugify(f"selfchat-{model.name[:70]}-{run.pk}")
    benchmark.version = str(run.pk)
    benchmark.save(update_fields=["slug", "version"])

    tokens = tokens or [None] * len(chats)
    # seeds: (id, utterances[, length of the real dialogue]).
    records = [ItemRecord(TASK_SLUG, seed[0], mutual.turns(chat.utterances), {},
                          {"language": "en", "run": run.pk, "seed_id": seed[0], "model": model.name,
                           "seed_utterances": chat.seed_length, "loop_start": start,
                           **({"source_utterances": seed[2]} if len(seed) > 2 else {}),
                           **({"utterance_tokens": counts} if counts is not None else {})},
                          # Known by construction: everything after the seed is the model's.
                          {"is_ai": True, "first_ai_turn": chat.seed_length}, f"seed {seed[0]}")
               for seed, chat, start, counts in zip(seeds, chats, loop_starts, tokens)]
    add_tasks_and_items(benchmark, [], records, source=seeds_path)
    item_ids = dict(Item.objects.filter(task=task).values_list("external_id", "pk"))
    Prediction.objects.bulk_create(
        Prediction(run=run, item_id=item_ids[seed_id], parse_status=ParseStatus.PARSED,
                   raw_output=json.dumps({"utterances": chat.utterances, "loop_start": start}, ensure_ascii=False),
                   options=[asdict(step) for step in chat.steps], answer="no_loop" if start is None else "loop")
        for (seed_id, *_), chat, start in zip(seeds, chats, loop_starts))
    looping = sum(start is not None for start in loop_starts)
    record(run, RunEventKind.CREATED, actor=user, items=len(chats), model_sha256=model.sha256, prompt_sha256=run.prompt_sha256)
    record(run, RunEventKind.FINISHED, actor=user, items=len(chats), looping=looping, seconds=seconds)
    return run
