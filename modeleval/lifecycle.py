"""A run's event log and its stop, shared by the actions (start, cancel) and the runner (fail).

They sit below both so that the runner, which the Celery task calls, does not import the actions that
queue the task.
"""
from django.utils import timezone

from .models import ACTIVE_RUN_STATES, ChunkState, EvalRun, RunChunk, RunEvent, RunEventKind, RunState


def record(run, kind, *, chunk=None, actor=None, reason="", **figures):
    return RunEvent.objects.create(run=run, chunk=chunk, kind=RunEventKind(kind), actor=actor, reason=reason,
                                   figures=figures)


def stop_run(run, state, reason, actor=None, chunk=None, **figures) -> bool:
    """Move an active run to `state` and skip its pending chunks; False when it was no longer active."""
    stopped = EvalRun.objects.filter(pk=run.pk, state__in=ACTIVE_RUN_STATES).update(
        state=state, reason=reason, finished_at=timezone.now())
    if stopped:
        RunChunk.objects.filter(run=run, state=ChunkState.PENDING).update(state=ChunkState.SKIPPED)
        record(run, state, chunk=chunk, actor=actor, reason=reason, **figures)
    run.refresh_from_db()
    return bool(stopped)


def fail_run(run: EvalRun, reason: str, *, chunk=None, **figures) -> bool:
    """Called by the runner inside its transaction (the run row already locked)."""
    return stop_run(run, RunState.FAILED, reason, chunk=chunk, **figures)
