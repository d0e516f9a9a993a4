"""Celery tasks on the `gpu` queue (the `cpu` queue for models behind an API). Thin: the work and its
bookkeeping are in `modeleval.runner` (chunks) and `modeleval.selfchat_runs` (self-chat runs).

Nothing here imports torch: the worker's parent process only routes messages, and each pool
process loads the model on its first chunk (`inference.load`) and keeps it.
"""
from celery import shared_task
from django.db import DatabaseError

from . import runner, selfchat_runs

DATABASE_RETRY_S = 30
DATABASE_MAX_RETRIES = 20


# Late acks plus reject-on-worker-lost: a chunk whose worker dies is delivered again, and the
# attempt counter in the database (not Celery's retry count, which a killed process loses) decides
# when to give up. max_retries=None leaves that decision to the database.
@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def score_chunk(self, chunk_id: int) -> str:
    try:
        return runner.process_chunk(chunk_id, worker=self.request.hostname or "")
    except runner.RetryChunk as retry:
        raise self.retry(countdown=retry.countdown, exc=retry.error) from None
    except DatabaseError as error:
        # The bookkeeping itself could not be written (database away): a failed task would be
        # acknowledged and the chunk left running for ever, so wait and deliver it again.
        raise self.retry(countdown=DATABASE_RETRY_S, exc=error, max_retries=DATABASE_MAX_RETRIES) from None


# A self-chat run is one message: its generation is repeated from the start when the message comes again (its
# worker died), up to the run's max_attempts, counted in the database (selfchat_runs.generation._claim).
@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def generate_selfchat(self, run_id: int) -> str:
    try:
        return selfchat_runs.generate(run_id, worker=self.request.hostname or "")
    except DatabaseError as error:
        raise self.retry(countdown=DATABASE_RETRY_S, exc=error, max_retries=DATABASE_MAX_RETRIES) from None


# From beat, on the `cpu` queue: chunks whose worker stopped beating are sent again (runner.reclaim_lost_chunks).
@shared_task(ignore_result=True)
def reclaim_lost_chunks() -> int:
    return len(runner.reclaim_lost_chunks())
