"""The life of a chunk: claimed, scored, written, counted; retried or given up.

Delivery is at least once (late acks: a message is acknowledged after the task returns, and a
message whose worker died is delivered again), so everything here is safe to repeat:
- the claim increments `attempts` in its own committed transaction before any work, so a worker
  killed mid-chunk still used an attempt; a delivery past `max_attempts` is refused, and the chunk
  and its run fail with the reason (a poison chunk cannot loop for ever);
- predictions are upserted on (run, item, variant), so a chunk scored twice writes each row once;
- completion locks the chunk and counts it only if it was not done already, then moves the run to
  finished when `chunks_done` reaches `chunks_total` (a conditional UPDATE, so exactly one chunk
  finishes the run, and no chord or result backend is needed);
- a running attempt's worker writes a heartbeat (`Heartbeat`); a chunk whose worker stopped beating (killed,
  its machine gone) is sent again by `reclaim_lost_chunks` (every CHUNK_RECLAIM_EVERY_S, from beat) within about
  a minute, instead of waiting for the broker's visibility timeout (an hour, longer than the longest chunk).
Locks are always taken run first, then chunk, as `cancel_run` does, so they cannot deadlock.
"""
from __future__ import annotations

import socket
import threading
import traceback
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from . import modes
from .lifecycle import fail_run, record
from .models import ChunkState, EvalRun, Prediction, RunChunk, RunEventKind, RunState
from .modes import family
from .training import SYNC_WORKER

RETRY_DELAY_S = 2  # times the attempt number: 2 s, 4 s, ...
# A chunk is scored in up to this many steps, each of at least PROGRESS_MIN_STEP items, so that the runs page
# moves while a chunk is scored rather than from 0 to all of it at once.
PROGRESS_STEPS = 8
PROGRESS_MIN_STEP = 2
PREDICTION_FIELDS = ("chunk", "gold", "options", "prompt", "raw_output", "answer", "answer_norm", "answer_per_token",
                     "parse_status", "correct", "rating", "probabilities", "fewshot_ids", "api_calls")


class RetryChunk(Exception):
    """The attempt failed and another is allowed: the caller schedules it."""

    def __init__(self, error: BaseException, countdown: float):
        self.error, self.countdown = error, countdown
        super().__init__(f"{type(error).__name__}: {error} (retry in {countdown} s)")


@dataclass
class Claim:
    run: EvalRun
    chunk: RunChunk


def _locked(chunk_id):
    """The chunk and its run, locked in that order: run, then chunk."""
    run_id = RunChunk.objects.values_list("run_id", flat=True).get(pk=chunk_id)
    run = EvalRun.objects.select_for_update().select_related("model").get(pk=run_id)
    return run, RunChunk.objects.select_for_update().get(pk=chunk_id)


@transaction.atomic
def claim_chunk(chunk_id: int, worker: str = "") -> Claim | None:
    """Take the chunk for one attempt, or None when there is nothing to do: already done or given
    up (a repeated delivery), its run no longer active, or its attempts used up."""
    run, chunk = _locked(chunk_id)
    if chunk.state in (ChunkState.DONE, ChunkState.FAILED, ChunkState.SKIPPED):
        return None
    if run.state not in (RunState.QUEUED, RunState.RUNNING):
        chunk.state = ChunkState.SKIPPED
        chunk.save(update_fields=["state"])
        return None
    if chunk.attempts >= run.max_attempts:
        # Every earlier delivery died without reporting back (e.g. the worker was killed each time).
        _give_up(run, chunk, f"attempt {chunk.attempts + 1} refused: {chunk.attempts} attempts already started "
                             f"and none finished{'; last error: ' + chunk.error if chunk.error else ''}")
        return None
    chunk.attempts += 1
    chunk.state, chunk.worker, chunk.started_at, chunk.finished_at = ChunkState.RUNNING, worker, timezone.now(), None
    chunk.items_scored, chunk.heartbeat_at = 0, chunk.started_at
    chunk.save(update_fields=["attempts", "state", "worker", "started_at", "finished_at", "items_scored",
                              "heartbeat_at"])
    if chunk.attempts > 1:
        record(run, RunEventKind.CHUNK_RETRIED, chunk=chunk, worker=worker, attempt=chunk.attempts,
               last_error=chunk.error)
    if run.state == RunState.QUEUED:
        run.state, run.started_at = RunState.RUNNING, timezone.now()
        run.save(update_fields=["state", "started_at"])
        record(run, RunEventKind.STARTED, worker=worker)
    return Claim(run, chunk)


def _give_up(run, chunk, reason):
    chunk.state, chunk.finished_at, chunk.error = ChunkState.FAILED, timezone.now(), reason
    chunk.save(update_fields=["state", "finished_at", "error"])
    fail_run(run, f"chunk {chunk.index} failed after {chunk.attempts} attempts: {reason}", chunk=chunk,
             attempts=chunk.attempts)


def write_predictions(run, chunk, rows) -> None:
    """Upsert on (run, item, variant): writing the same rows again changes nothing and adds nothing."""
    Prediction.objects.bulk_create(
        [Prediction(run=run, chunk=chunk, **row) for row in rows],
        update_conflicts=True, unique_fields=["run", "item", "variant"],
        update_fields=[*PREDICTION_FIELDS, "updated_at"])


@transaction.atomic
def complete_chunk(chunk_id: int, rows) -> bool:
    """Write the chunk's predictions and count it; False (and no writes) when another delivery of the
    same chunk got there first."""
    run, chunk = _locked(chunk_id)
    if chunk.state in (ChunkState.DONE, ChunkState.FAILED):
        return False
    write_predictions(run, chunk, rows)
    chunk.state, chunk.finished_at, chunk.error = ChunkState.DONE, timezone.now(), ""
    chunk.save(update_fields=["state", "finished_at", "error"])
    EvalRun.objects.filter(pk=run.pk).update(chunks_done=F("chunks_done") + 1,
                                             items_done=F("items_done") + len(chunk.item_ids))
    now = timezone.now()
    if EvalRun.objects.filter(pk=run.pk, state=RunState.RUNNING, chunks_done=F("chunks_total")).update(
            state=RunState.FINISHED, finished_at=now):
        seconds = (now - run.started_at).total_seconds() if run.started_at else None
        record(run, RunEventKind.FINISHED, items=run.items_total, seconds=seconds,
               items_per_s=run.items_total / seconds if seconds else None)
    return True


@transaction.atomic
def fail_attempt(chunk_id: int, error: BaseException) -> bool:
    """Record a failed attempt; True when another is allowed, else the chunk and run fail."""
    run, chunk = _locked(chunk_id)
    if chunk.state != ChunkState.RUNNING:
        return False
    text = f"{type(error).__name__}: {error}"
    if not run.is_active:  # cancelled (or failed elsewhere) meanwhile: nothing left to retry for
        chunk.state, chunk.error = ChunkState.SKIPPED, text
        chunk.save(update_fields=["state", "error"])
        return False
    if chunk.attempts >= run.max_attempts:
        _give_up(run, chunk, text)
        return False
    chunk.state, chunk.error, chunk.finished_at = ChunkState.PENDING, text, timezone.now()
    chunk.save(update_fields=["state", "error", "finished_at"])
    record(run, RunEventKind.CHUNK_ATTEMPT_FAILED, chunk=chunk, reason=text, attempt=chunk.attempts,
           traceback=traceback.format_exception(error)[-3:])
    return True


def process_chunk(chunk_id: int, worker: str = "") -> str:
    """One attempt at a chunk: "done", "skipped", "failed", or RetryChunk raised when the attempt
    failed and another is allowed."""
    from . import inference  # imports torch: only where chunks are scored, and only when one is

    claim = claim_chunk(chunk_id, worker)
    if claim is None:
        return "skipped"
    trains = modes.plan(claim.run.mode).trains
    try:
        with Heartbeat(claim.chunk):
            rows = _rows(claim, trains, inference)
        # Inside the try: rows the database refuses are this chunk's failure too, not a lost message.
        if not complete_chunk(chunk_id, rows):
            return "skipped"
        if trains:
            # A training run's chunks run one after the other; after the last, its model scores the test split.
            from . import actions  # deferred: loads the scoring stack only where a training chunk ran

            queued = not worker.startswith(SYNC_WORKER)
            if claim.chunk.index == claim.run.chunks_total - 1:
                actions.finish_training(claim.run, enqueue=queued)
            elif queued:
                actions.enqueue_chunks(claim.run.pk)
        return "done"
    except inference.PermanentError as error:
        with transaction.atomic():
            run, chunk = _locked(chunk_id)
            _give_up(run, chunk, str(error))
        return "failed"
    except Exception as error:
        if fail_attempt(chunk_id, error):
            raise RetryChunk(error, RETRY_DELAY_S * claim.chunk.attempts) from error
        return "failed"


def _rows(claim, trains, inference):
    if trains:
        from .training import train_chunk

        return train_chunk(claim.run, claim.chunk)
    return score_in_steps(claim.run, claim.chunk, _items(claim.chunk), inference.score_items)


class Heartbeat:
    """While a chunk is scored, a thread of its worker writes the chunk's heartbeat every CHUNK_HEARTBEAT_S (the
    attempt's own: a later attempt's claim stops it counting), so that `reclaim_lost_chunks` can tell a worker
    that is still scoring from one that was killed."""

    def __init__(self, chunk):
        self.chunk_id, self.attempt = chunk.pk, chunk.attempts
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"heartbeat-chunk-{chunk.pk}", daemon=True)

    def _beat(self):
        try:
            while not self.stopped.wait(settings.CHUNK_HEARTBEAT_S):
                try:
                    RunChunk.objects.filter(pk=self.chunk_id, state=ChunkState.RUNNING, attempts=self.attempt) \
                        .update(heartbeat_at=timezone.now())
                except Exception:  # noqa: BLE001 - the database away for a moment: the next beat tries again
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.thread.join(timeout=30)


def reclaim_lost_chunks(now=None) -> list[int]:
    """Send again every running chunk whose worker has not beaten for CHUNK_LOST_AFTER_S (killed, or its machine
    gone): the chunk goes back to pending with an event, and one message for it goes on its queue. Its attempt
    stays counted (the claim counted it), so a chunk that kills every worker still stops at the run's attempts
    limit. The lost worker's own message, if the broker ever hands it out again, finds the chunk done and is
    skipped. The ids of the chunks sent again."""
    from . import actions  # the queue of a run's chunks is the actions' (enqueue_chunks)

    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.CHUNK_LOST_AFTER_S)
    reclaimed = {}
    for chunk_id in RunChunk.objects.filter(state=ChunkState.RUNNING, heartbeat_at__lt=stale,
                                            run__state=RunState.RUNNING).values_list("pk", flat=True):
        with transaction.atomic():
            run, chunk = _locked(chunk_id)
            if chunk.state != ChunkState.RUNNING or not chunk.heartbeat_at or chunk.heartbeat_at >= stale:
                continue  # it beat, finished or was taken again meanwhile
            chunk.state = ChunkState.PENDING
            chunk.save(update_fields=["state"])
            silent = round((now - chunk.heartbeat_at).total_seconds())
            record(run, RunEventKind.CHUNK_ATTEMPT_FAILED, chunk=chunk, attempt=chunk.attempts, worker=chunk.worker,
                   reason=f"worker lost: no heartbeat for {silent} s; the chunk is sent again")
            reclaimed.setdefault(run.pk, []).append(chunk_id)
    for run_id, chunk_ids in reclaimed.items():
        actions.enqueue_chunks(run_id, only=chunk_ids)
    return [chunk_id for chunk_ids in reclaimed.values() for chunk_id in chunk_ids]


def score_in_steps(run, chunk, items, score) -> list[dict]:
    """`score(run, items)` over the chunk's items a few at a time (the rows are those of one call), the chunk's
    `items_scored` committed after each step for the runs page to show; in one call for a family whose items share
    prompts."""
    if getattr(family(run.mode), "SHARES_PROMPTS_ACROSS_ITEMS", False):
        return score(run, items)  # a step would generate again the prompts another step shares
    step = max(PROGRESS_MIN_STEP, -(-len(items) // PROGRESS_STEPS))
    rows = []
    for start in range(0, len(items), step):
        rows += score(run, items[start:start + step])
        RunChunk.objects.filter(pk=chunk.pk, state=ChunkState.RUNNING).update(
            items_scored=min(start + step, len(items)))
    return rows


def _items(chunk):
    from benchmarks.models import Item

    by_id = Item.objects.select_related("task").in_bulk(chunk.item_ids)
    if missing := [pk for pk in chunk.item_ids if pk not in by_id]:
        raise LookupError(f"items {missing} no longer exist")
    return [by_id[pk] for pk in chunk.item_ids]


def run_sync(run: EvalRun, on_chunk=None, worker: str | None = None) -> EvalRun:
    """Score a run's pending chunks in this process, in order, retrying at once (no queue to wait
    on); `on_chunk(run)` is called after each chunk, e.g. to draw progress."""
    worker = worker or f"{SYNC_WORKER}{socket.gethostname()}"
    for chunk_id in run.chunks.filter(state=ChunkState.PENDING).order_by("index").values_list("pk", flat=True):
        while True:
            try:
                process_chunk(chunk_id, worker)
                break
            except RetryChunk:
                continue
        run.refresh_from_db()
        if on_chunk:
            on_chunk(run)
        if not run.is_active:
            break
    run.refresh_from_db()
    return run
