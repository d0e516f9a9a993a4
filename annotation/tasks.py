from celery import shared_task

from . import actions


@shared_task
def reclaim_expired_leases():
    """Run by beat every minute (config.settings.CELERY_BEAT_SCHEDULE); returns how many leases expired."""
    return actions.reclaim_expired_leases()
