"""The API's one exception handler: every refusal comes out as {"code", "detail", ...}.

An ActionError's status is read from STATUS here, the only place where a refusal meets HTTP; DRF's own
errors (validation, authentication, permission, 404, throttling) keep their status and get a code.
"""
from django.http import Http404
from django.utils.translation import gettext
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import ActionError, Code

_BY_STATUS = {
    400: (Code.INVALID_ANSWERS, Code.INVALID_VALUE, Code.INVALID_PARAMETER, Code.REASON_REQUIRED,
          Code.INVALID_SETTINGS, Code.INVALID_CAMPAIGN, Code.INVALID_ACCOUNTS, Code.INVALID_FILE, Code.INVALID_SCOPE,
          Code.MODEL_EXISTS, Code.MODEL_SOURCE_MISSING, Code.MODEL_MISMATCH, Code.UNKNOWN_MODEL, Code.UNKNOWN_TASK,
          Code.UNKNOWN_BENCHMARK, Code.UNKNOWN_RUN, Code.BENCHMARK_EXISTS, Code.BAD_TEMPLATE, Code.BAD_MODE,
          Code.BAD_SETTINGS, Code.BAD_SEEDS, Code.BAD_ENDPOINT, Code.BAD_API_MODEL, Code.BAD_KEY_ENV, Code.NOT_API,
          Code.KEY_ENV_NOT_ALLOWED, Code.ENDPOINT_NOT_ALLOWED,
          Code.PROBE_FAILED, Code.MODE_UNSUITED, Code.MODE_UNSUPPORTED, Code.NOT_SELFCHAT, Code.SEEDS_DIFFER,
          Code.NO_ITEMS, Code.NO_GOLD, Code.NO_EXAMPLES),
    403: (Code.FORBIDDEN, Code.NOT_YOUR_ASSIGNMENT, Code.OWN_WORK, Code.NOT_REVIEWER, Code.ACCEPTANCE_REQUIRED),
    404: (Code.NOT_FOUND, Code.NOT_IN_SAMPLE),
    # The request was right but the state of things refuses it now.
    409: (Code.TOO_EARLY, Code.ALREADY_SUBMITTED, Code.LEASE_CLOSED, Code.LEASE_EXPIRED, Code.NOT_CHANGEABLE,
          Code.SUBMISSION_ID_REUSED, Code.WRONG_ITEM, Code.INVALID_TRANSITION, Code.NOT_COMPLETE,
          Code.SAMPLE_INCOMPLETE, Code.BELOW_THRESHOLD, Code.MAX_ROUNDS, Code.ALREADY_RESOLVED, Code.AWAITING_LABELS,
          Code.GOLD_FROZEN, Code.NOTHING_TO_CUT, Code.DUPLICATE, Code.NOT_ACTIVE),
    # Again after Retry-After seconds: over a limit, or a passing outage.
    429: (Code.TOO_MANY_REPORTS, Code.TOO_MANY_RUNS, Code.TOO_MANY_FLAGS),
    503: (Code.BROKER_UNAVAILABLE,),
}
STATUS = {code: status for status, codes in _BY_STATUS.items() for code in codes}
RETRY_AFTER_S = {Code.BROKER_UNAVAILABLE: 60}


def http_status(error: ActionError) -> int:
    return STATUS[error.code]


def exception_handler(exc, context):
    if isinstance(exc, ActionError):
        retry = exc.extra.get("retry_after") or RETRY_AFTER_S.get(exc.code)
        return Response(exc.as_dict(), status=http_status(exc),
                        headers={"Retry-After": str(retry)} if retry else None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        response.data = {"code": "invalid", "detail": gettext("Some fields are not valid."), "errors": data}
    elif isinstance(data, dict) and "detail" in data and "code" not in data:
        code = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        code = "not_found" if isinstance(exc, Http404) else code
        response.data = {"code": code if isinstance(code, str) else "error", "detail": data["detail"]}
    return response
