"""Filters for the log configuration in settings.LOGGING."""
import logging


class OneLineForbidden(logging.Filter):
    """A refused request (403) is expected traffic: keep its line, drop the PermissionDenied traceback
    Django attaches to it. Server errors keep theirs."""

    def filter(self, record):
        if getattr(record, "status_code", None) == 403:
            record.exc_info = record.exc_text = None
        return True
