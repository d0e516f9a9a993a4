"""Self-chat runs (BotChat): a registered model continues human chat seeds, and the dialogues it
writes become items to be judged.

`start_selfchat` checks the settings and the seeds (a MuTual-shaped file, or the real dialogues of a
MuTual import already in the database), and writes the run at once, queued, with its benchmark
`selfchat-<model>-<run id>` and task `selfchat` (no items yet); on commit the generation goes to the
`gpu` queue (`tasks.generate_selfchat`), or `run_selfchat` does it in this process. `generate` takes
the run (running), continues the seeds step by step outside any transaction (minutes on a CPU),
counting the steps as the run's chunks (`chunks_done` of `chunks_total`, one step is one utterance
more for every dialogue), then one transaction writes one item per dialogue and one prediction per
seed and finishes the run: `raw_output` is the dialogue as JSON ({"utterances", "loop_start"}),
`options` holds each generated utterance's step ({index, prompt, dropped, reply, text}: the exact
prompt, the oldest turns left out of it, the decoded reply and the utterance kept), `answer` is "loop"
or "no_loop". Each item's meta keeps the token count of every utterance under the run model's tokenizer
(`utterance_tokens`). A failure writes no items: the run is failed with the reason, its benchmark stays
empty. Delivery is at least once: a delivery that finds the run running (its worker died) generates
again, up to the run's `max_attempts`; the first to finish writes, a later one (or one of a cancelled
run) writes nothing.

Settings default to ours (greedy, a short reply cut at its first newline); `preset="botchat"` takes the
study's (`scorers.botchat.SELFCHAT_SETTINGS`; for a model behind an API `SELFCHAT_API_SETTINGS`, as its gpt.py
ran GPT-4, GPT-3.5 and Claude), and any setting given explicitly wins over either. A model behind an API is asked
through its chat endpoint on the `cpu` queue (greedy only: temperature 0), each request cached as any API call.
Nothing here imports torch at import time (the web process queues runs); `generate` loads the model.
"""
from __future__ import annotations

import itertools
import json
import socket
import time
import uuid
from dataclasses import asdict

from celery import current_app
from django.db import DatabaseError, transaction
from django.utils import timezone
from django.utils.text import slugify

from benchmarks.actions import add_tasks_and_items
from benchmarks.importers import ImportFailure, ItemRecord, TaskSpec, mutual
from benchmarks.models import Benchmark, Item
from core.errors import Code

from . import bounds, modes
from .actions import RELEASED_REFUSAL, RunError, check_runs_per_person, send_or_fail
from .lifecycle import fail_run, record
from .models import ACTIVE_RUN_STATES, EvalRun, Mode, ModelSpec, ParseStatus, Prediction, RunEventKind, RunState
from .permissions import can_evaluate_models
from .scorers import botchat, loops, selfchat_generation
from .scorers.botchat import SEED_UTTERANCES
from .scorers.decoding import DECODINGS
from .scorers.prompts import template_hash
from .training import SYNC_WORKER

TASK_SLUG = "selfchat"
# System prompt text -> its version (change the text, change the version); any other text is "custom".
PROMPT_VERSIONS = {selfchat_generation.DEFAULT_SYSTEM_PROMPT: "selfchat-system-en/1",
                   botchat.SELFCHAT_SYSTEM_PROMPT: "botchat-selfchat-system-en/1"}
DEFAULTS = {"utterances": selfchat_generation.DEFAULT_UTTERANCES,
            "system_prompt": selfchat_generation.DEFAULT_SYSTEM_PROMPT,
            "max_new_tokens": selfchat_generation.DEFAULT_MAX_NEW_TOKENS,
            "decoding": selfchat_generation.DEFAULT_DECODING,
            "reply_cut": selfchat_generation.DEFAULT_REPLY_CUT}
PRESETS = {botchat.PRESET: botchat.SELFCHAT_SETTINGS}
API_PRESETS = {botchat.PRESET: botchat.SELFCHAT_API_SETTINGS}  # over PRESETS for models behind an API


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


def resolve_settings(*, preset="", utterances=None, system_prompt=None, max_new_tokens=None, decoding=None,
                     reply_cut=None, similarity=loops.DEFAULT_SIMILARITY, threshold=loops.DEFAULT_THRESHOLD,
                     batch_size=32, seed=0, api=False):
    """The run's settings: ours, or the preset's (its settings for models behind an API when `api`), with every
    setting given (not None) on top."""
    if preset and preset not in PRESETS:
        raise RunError(Code.BAD_SETTINGS, f"unknown self-chat preset {preset!r}; expected one of {sorted(PRESETS)}")
    given = {"utterances": utterances, "system_prompt": system_prompt, "max_new_tokens": max_new_tokens,
             "decoding": decoding, "reply_cut": reply_cut}
    preset_settings = {**PRESETS.get(preset, {}), **(API_PRESETS.get(preset, {}) if api else {})}
    chosen = {**DEFAULTS, **preset_settings, **{k: v for k, v in given.items() if v is not None}}
    if api and chosen["decoding"] != "greedy":
        raise RunError(Code.BAD_SETTINGS, "a model behind an API self-chats greedily (temperature 0): decoding must be "
                                       f"\"greedy\", not {chosen['decoding']!r}")
    # utterances from 3: one more than the seed's two (SEED_UTTERANCES).
    bounds.check({**chosen, "batch_size": batch_size, "seed": seed}, {**bounds.SELFCHAT, "seed": bounds.SEED})
    if chosen["decoding"] not in DECODINGS or chosen["reply_cut"] not in selfchat_generation.REPLY_CUTS:
        raise RunError(Code.BAD_SETTINGS, f"decoding must be one of {DECODINGS} and reply_cut one of "
                                       f"{selfchat_generation.REPLY_CUTS}")
    if similarity not in loops.SIMILARITIES or not 0 < threshold <= 1:
        raise RunError(Code.BAD_SETTINGS, f"loop similarity must be one of {sorted(loops.SIMILARITIES)} "
                                       "and its threshold in (0, 1]")
    return {**chosen, "preset": preset, "backend": "api" if api else "local", "seed_utterances": SEED_UTTERANCES,
            "system_prompt_sha256": template_hash(chosen["system_prompt"]), "loop_similarity": similarity,
            "loop_threshold": threshold, "batch_size": batch_size, "seed": seed}


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


@transaction.atomic
def start_selfchat(*, model: ModelSpec, seeds_path=None, seeds_benchmark=None, limit=None, preset="",
                   utterances=None, system_prompt=None, max_new_tokens=None, decoding=None, reply_cut=None,
                   similarity=loops.DEFAULT_SIMILARITY, threshold=loops.DEFAULT_THRESHOLD, batch_size=32, seed=0,
                   max_attempts=3, user=None, enqueue=True) -> EvalRun:
    """A queued self-chat run of `model` on the first `limit` seeds of `seeds_path` (a MuTual-shaped file) or of
    `seeds_benchmark` (a MuTual import, by slug or object), its benchmark created empty. On commit the generation
    goes to the `gpu` queue; `enqueue=False` leaves it for `generate` in this process. `user`, when given, must be
    one who may run models (`permissions.can_evaluate_models`)."""
    if user is not None and not can_evaluate_models(user):
        raise RunError(Code.FORBIDDEN, "self-chat runs are started by staff and researchers")
    bounds.check({"limit": limit, "max_attempts": max_attempts}, {"limit": bounds.SELFCHAT["limit"],
                                                                  "max_attempts": bounds.RUN["max_attempts"]})
    check_runs_per_person(user)
    if model.is_api and not (model.capabilities.get("chat") or {}).get("ok"):
        raise RunError(Code.MODE_UNSUPPORTED, f"model {model.name}: self-chat needs chat, which the endpoint cannot "
                                           f"serve: {(model.capabilities.get('chat') or {}).get('reason')}")
    if model.trained_by_id is not None:
        raise RunError(Code.MODE_UNSUITED, f"model {model.name} is a classifier trained here: it cannot write "
                                           "dialogues")
    if model.is_released:
        raise RunError(Code.MODE_UNSUITED, RELEASED_REFUSAL.format(model=model.name))
    settings = resolve_settings(preset=preset, utterances=utterances, system_prompt=system_prompt,
                                max_new_tokens=max_new_tokens, decoding=decoding, reply_cut=reply_cut,
                                similarity=similarity, threshold=threshold, batch_size=batch_size, seed=seed,
                                api=model.is_api)
    selection = _selection(seeds_path, seeds_benchmark, limit)
    seeds = _seeds(selection, limit)
    steps = max(settings["utterances"] - min(len(seed[1]) for seed in seeds), 0)
    run = _create_run(model, selection, settings, user, state=RunState.QUEUED, items_total=len(seeds),
                      chunks_total=steps, max_attempts=max_attempts)
    record(run, RunEventKind.CREATED, actor=user, items=len(seeds), steps=steps, model_sha256=model.sha256,
           prompt_sha256=run.prompt_sha256)
    if enqueue:
        transaction.on_commit(lambda: enqueue_selfchat(run.pk))
    return run


SELFCHAT_TASK = "modeleval.tasks.generate_selfchat"
SELFCHAT_MODES = modes.modes_where(writes=modes.Writes.DIALOGUES)


def enqueue_selfchat(run_id):
    """Put the run's generation on the gpu queue, or the cpu queue for a model behind an API (an unreachable
    broker fails the run: `actions.send_or_fail`)."""
    run = EvalRun.objects.select_related("model").filter(pk=run_id).first()
    queue = modes.plan(run.mode, run.model).queue if run is not None else modes.GPU_QUEUE
    send_or_fail(run_id, lambda: current_app.tasks[SELFCHAT_TASK].apply_async((run_id,), queue=queue))


def run_selfchat(*, model: ModelSpec, seeds_path=None, seeds_benchmark=None, limit=None, user=None,
                 **settings) -> EvalRun:
    """Start a self-chat run and generate it in this process (the command line); RunError when it fails, the run
    then failed with the reason. `settings` as `start_selfchat` takes them."""
    run = start_selfchat(model=model, seeds_path=seeds_path, seeds_benchmark=seeds_benchmark, limit=limit,
                         user=user, enqueue=False, **settings)
    generate(run.pk, worker=f"{SYNC_WORKER}{socket.gethostname()}", raise_errors=True)
    run.refresh_from_db()
    return run


class _Stopped(Exception):
    """The run was cancelled or failed while its dialogues were being generated."""


@transaction.atomic
def _claim(run_id, worker):
    """The run, moved to running for this delivery; None when there is nothing to do (it is no longer active, or
    earlier deliveries used up its attempts: then it fails)."""
    run = EvalRun.objects.select_for_update().select_related("model").filter(pk=run_id, mode__in=SELFCHAT_MODES).first()
    if run is None or run.state not in ACTIVE_RUN_STATES:
        return None
    attempts = run.events.filter(kind=RunEventKind.STARTED).count()
    if attempts >= run.max_attempts:
        # Every earlier delivery died without reporting back (e.g. its worker was killed each time).
        fail_run(run, f"delivery {attempts + 1} refused: {attempts} generations started and none finished")
        return None
    run.state, run.chunks_done = RunState.RUNNING, 0
    run.started_at = run.started_at or timezone.now()
    run.save(update_fields=["state", "chunks_done", "started_at"])
    record(run, RunEventKind.STARTED, worker=worker, attempt=attempts + 1)
    return run


def generate(run_id: int, *, worker: str = "", raise_errors=False) -> str:
    """One delivery of a self-chat run: generate its dialogues and write them ("done"), or fail the run with the
    reason ("failed"; with `raise_errors` the error is raised again); "skipped" when the run is no longer active.
    A database error is raised for the caller to try again later."""
    run = _claim(run_id, worker)
    if run is None:
        return "skipped"
    try:
        written = _generate_and_write(run)
    except _Stopped:
        return "skipped"
    except DatabaseError:
        raise
    except Exception as error:
        reason = f"{error} [{error.code}]" if isinstance(error, RunError) else f"{type(error).__name__}: {error}"
        _fail(run, reason)
        if raise_errors:
            raise
        return "failed"
    return "done" if written else "skipped"


def _generate_and_write(run) -> bool:
    from . import inference  # imports torch: only where dialogues are generated

    model, settings = run.model, dict(run.settings)
    seeds = _seeds(run.selection, run.items_total)
    try:
        loaded = inference.load(model)
    except inference.PermanentError as error:
        raise RunError(Code.MODEL_MISMATCH, str(error)) from None
    def step_done(step):
        if not EvalRun.objects.filter(pk=run.pk, state=RunState.RUNNING).update(
                chunks_done=min(step, run.chunks_total)):
            raise _Stopped

    clock = time.perf_counter()
    if model.is_api:
        # The server applies the chat template and counts each reply's tokens: BotChat counted GPT-4's in its
        # CL100K tokens, which is what the endpoint of a GPT model reports.
        settings.update(max_length=None, chat_template="", use_chat=True,
                        token_counter=f"completion tokens reported by {model.endpoint} ({model.api_model})")
        chats, tokens = selfchat_generation.self_chat_api(
            loaded.converse, [seed[1] for seed in seeds], utterances=settings["utterances"],
            system=settings["system_prompt"], max_new_tokens=settings["max_new_tokens"],
            reply_cut=settings["reply_cut"], on_step=step_done)
        loop_starts = _loop_starts(chats, settings)
        return _finish(run.pk, settings, seeds, chats, loop_starts, tokens, round(time.perf_counter() - clock, 1))
    # The run states what the prompts were built with, so `render_prompt` can rebuild each one.
    # The study counted tokens with GPT-4's CL100K, which cannot be installed here: the run model's tokenizer
    # stands in, named on the run.
    settings.update(max_length=model.max_length or loaded.info.max_length, chat_template=model.chat_template,
                    use_chat=bool(model.use_chat_template and (model.chat_template or loaded.info.has_chat_template)),
                    token_counter=f"tokenizer of {model.name}")
    chats = selfchat_generation.self_chat(
        loaded.model, loaded.tokenizer, [seed[1] for seed in seeds], utterances=settings["utterances"],
        system=settings["system_prompt"], max_new_tokens=settings["max_new_tokens"],
        max_length=settings["max_length"], chat_template=model.chat_template or None, use_chat=settings["use_chat"],
        batch_size=settings["batch_size"], decoding=settings["decoding"], reply_cut=settings["reply_cut"],
        sampling_seed=settings["seed"], on_step=step_done)
    tokens = [selfchat_generation.token_counts(loaded.tokenizer, chat.utterances) for chat in chats]
    return _finish(run.pk, settings, seeds, chats, _loop_starts(chats, settings), tokens,
                   round(time.perf_counter() - clock, 1))


def _loop_starts(chats, settings):
    return [loops.loop_start(chat.utterances, similarity=settings["loop_similarity"],
                             threshold=settings["loop_threshold"], first=chat.seed_length) for chat in chats]


@transaction.atomic
def _finish(run_id, settings, seeds, chats, loop_starts, tokens, seconds) -> bool:
    """Write the dialogues and finish the run, unless it stopped meanwhile or another delivery wrote them."""
    run = EvalRun.objects.select_for_update().select_related("model", "benchmark").get(pk=run_id)
    if run.state != RunState.RUNNING:
        return False
    _write(run, seeds, chats, loop_starts, tokens, _source(run.selection))
    run.settings, run.state, run.finished_at = settings, RunState.FINISHED, timezone.now()
    run.items_done, run.chunks_done = len(chats), run.chunks_total
    run.save(update_fields=["settings", "state", "finished_at", "items_done", "chunks_done"])
    record(run, RunEventKind.FINISHED, items=len(chats), looping=sum(start is not None for start in loop_starts),
           seconds=seconds)
    return True


@transaction.atomic
def _fail(run, reason):
    run = EvalRun.objects.select_for_update().select_related("benchmark").get(pk=run.pk)
    if fail_run(run, reason):
        run.benchmark.description = f"no dialogues: self-chat run {run.pk} failed"
        run.benchmark.save(update_fields=["description"])


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
