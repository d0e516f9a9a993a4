"""One delivery of a self-chat run: claim it (running), continue the seeds step by step outside any transaction,
then write the dialogues and finish the run in one, or fail it with the reason."""
from __future__ import annotations

import time

from django.db import DatabaseError, transaction
from django.utils import timezone

from core.errors import Code

from .. import modes
from ..actions import RunError
from ..lifecycle import fail_run, record
from ..models import ACTIVE_RUN_STATES, EvalRun, RunEventKind, RunState
from ..scorers import loops, selfchat_generation
from .seeds import _seeds, _source
from .store import _write

SELFCHAT_MODES = modes.modes_where(writes=modes.Writes.DIALOGUES)


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
    from .. import inference  # imports torch: only where dialogues are generated

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
