"""A database that is restarting or failing over is a passing outage, not a server error."""
import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5
DETAIL = "The database is unavailable for a moment; retry the request in a few seconds."


class DatabaseUnavailableMiddleware:
    """A lost or refused database connection raised by any view answers 503 with Retry-After, and
    `{"code": "database_unavailable"}` under /api/, so that clients retry instead of giving up on a 500.
    Annotators' retries never label twice: a submit carries its client_submission_id, a lease is resumed."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        logger.warning("database unavailable on %s %s: %s", request.method, request.path, exception)
        if request.path.startswith("/api/"):
            response = JsonResponse({"code": "database_unavailable", "detail": DETAIL}, status=503)
        else:
            response = HttpResponse(DETAIL, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response


class BodySizeLimitMiddleware:
    """A request whose declared body is larger than MAX_BODY_BYTES answers 413 before anything reads it
    (`{"code": "body_too_large"}` under /api/). Bodies without a length are read as empty by Django."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_BYTES:
            detail = f"The request body is {length} bytes; at most {settings.MAX_BODY_BYTES} are accepted."
            if request.path.startswith("/api/"):
                return JsonResponse({"code": "body_too_large", "detail": detail}, status=413)
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
