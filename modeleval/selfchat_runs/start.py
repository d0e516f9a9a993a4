"""Starting a self-chat run: the checks, the queued run written at once, and its generation sent to a worker on
commit (`start_selfchat`), or done in this process (`run_selfchat`)."""
from __future__ import annotations

import socket

from celery import current_app
from django.db import transaction

from core.errors import Code

from .. import bounds, modes
from ..actions import RELEASED_REFUSAL, RunError, check_runs_per_person, send_or_fail
from ..lifecycle import record
from ..models import EvalRun, ModelSpec, RunEventKind, RunState
from ..permissions import can_evaluate_models
from ..scorers import loops
from ..training import SYNC_WORKER
from .generation import generate
from .seeds import _seeds, _selection
from .settings import resolve_settings
from .store import _create_run


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
