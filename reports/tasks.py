"""Celery tasks on the `cpu` queue: reports computed outside the request (reports.store)."""
from celery import shared_task

from . import store


# Late acks plus reject-on-worker-lost: a report whose worker dies is computed again by another.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def compute_report(stored_id: int) -> str:
    return store.compute(stored_id)
