"""Every /api/v1/ route of the whole URL conf, every method its view allows, every role.

The routes are read from `get_resolver()`, so an endpoint added anywhere without a row in MATRIX fails
`test_every_route_has_an_expectation`. Refused means 401/403, or 404 where the object stays hidden;
allowed means anything else below 500, and for a GET that answers a list, at least one row
(an empty list hides as well as a 403 does).
"""
import pytest
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from .conftest import ROLES

# One letter per role in ROLES order (anonymous, user, annotator, qc, expert, viewer, researcher, staff):
# Y allowed, n refused. Staff act as managers and viewers of every campaign, never as annotators or QC;
# "viewer" is a campaign viewer, "researcher" is in the researchers group with no campaign role.
MATRIX = {
    ("api-token", "post"):                            "YYYYYYYY",
    ("benchmark-list", "get"):                        "nYYYYYYY",
    ("benchmark-list", "post"):                       "nnnnnnnY",
    ("benchmark-detail", "get"):                      "nYYYYYYY",
    ("benchmark-detail", "put"):                      "nnnnnnnY",
    ("benchmark-detail", "patch"):                    "nnnnnnnY",
    ("benchmark-detail", "delete"):                   "nnnnnnnY",
    ("task-list", "get"):                             "nYYYYYYY",
    ("task-list", "post"):                            "nnnnnnnY",
    ("task-detail", "get"):                           "nYYYYYYY",
    ("task-detail", "put"):                           "nnnnnnnY",
    ("task-detail", "patch"):                         "nnnnnnnY",
    ("task-detail", "delete"):                        "nnnnnnnY",
    ("item-list", "get"):                             "nYYYYYYY",
    ("item-list", "post"):                            "nnnnnnnY",
    ("item-detail", "get"):                           "nYYYYYYY",
    ("item-detail", "put"):                           "nnnnnnnY",
    ("item-detail", "patch"):                         "nnnnnnnY",
    ("item-detail", "delete"):                        "nnnnnnnY",
    ("campaign-list", "get"):                         "nnYYYYnY",
    ("campaign-list", "post"):                        "nnnnnnnY",
    ("campaign-detail", "get"):                       "nnYYYYnY",
    ("campaign-baseline", "get"):                     "nnnnYYnY",
    ("campaign-annotations-export", "get"):           "nnnYYYnY",
    ("campaign-create-gold-version", "post"):         "nnnnnnnY",
    ("campaign-pin-gold", "post"):                    "nnnnnnnY",
    ("gold-version-benchmark-gold", "post"):          "nnnnnnnY",
    ("campaign-cut-batches", "post"):                 "nnnnnnnY",
    ("campaign-disagreements-by-guideline", "get"):   "nnnnYYnY",
    ("campaign-next-item", "post"):                   "nnYnnnnn",
    ("campaign-progress", "get"):                     "nnnYYYnY",
    ("campaign-settings-versions", "get"):            "nnYYYYnY",
    ("campaign-settings-versions", "post"):           "nnnnnnnY",
    ("membership-list", "get"):                       "nnYYYYnY",
    ("membership-list", "post"):                      "nnnnnnnY",
    ("membership-detail", "get"):                     "nnYnnnnY",
    ("membership-detail", "patch"):                   "nnnnnnnY",
    ("batch-list", "get"):                            "nnnYYYnY",
    ("batch-detail", "get"):                          "nnnYYYnY",
    ("batch-accept", "post"):                         "nnnYnnnn",
    ("batch-events", "get"):                          "nnnYYYnY",
    ("batch-hand-in", "post"):                        "nnYnnnnY",
    ("batch-items", "get"):                           "nnnYYYnY",
    ("batch-qc-label", "post"):                       "nnnYnnnn",
    ("batch-qc-sample", "get"):                       "nnnYnYnY",
    ("batch-reject", "post"):                         "nnnYnnnn",
    ("batch-reopen", "post"):                         "nnnnnnnY",
    ("batch-start-review", "post"):                   "nnnYnnnn",
    ("assignment-list", "get"):                       "nnYnnnnY",
    ("assignment-detail", "get"):                     "nnYnnnnY",
    ("assignment-release", "post"):                   "nnYnnnnn",
    ("assignment-submit", "post"):                    "nnYnnnnn",
    ("annotation-list", "get"):                       "nnYYYYnY",
    ("annotation-detail", "get"):                     "nnYYYYnY",
    ("disagreement-list", "get"):                     "nnnnYYnY",
    ("disagreement-detail", "get"):                   "nnnnYYnY",
    ("disagreement-resolve", "post"):                 "nnnnYnnn",
    ("gold-version-list", "get"):                     "nnnnYYnY",
    ("gold-version-detail", "get"):                   "nnnnYYnY",
    ("gold-version-freeze", "post"):                  "nnnnnnnY",
    ("gold-version-labels", "get"):                   "nnnnYYnY",
    ("modelspec-list", "get"):                        "nnnnnnYY",
    ("modelspec-list", "post"):                       "nnnnnnnY",
    ("modelspec-detail", "get"):                      "nnnnnnYY",
    ("evalrun-list", "get"):                          "nnnnnnYY",
    ("evalrun-list", "post"):                         "nnnnnnYY",
    ("evalrun-detail", "get"):                        "nnnnnnYY",
    ("evalrun-cancel", "post"):                       "nnnnnnYY",
    ("evalrun-chunks", "get"):                        "nnnnnnYY",
    ("evalrun-events", "get"):                        "nnnnnnYY",
    ("evalrun-summary", "get"):                       "nnnnnnYY",
    ("evalrun-modes", "get"):                         "nnnnnnYY",
    ("prediction-list", "get"):                       "nnnnnnYY",
    ("prediction-detail", "get"):                     "nnnnnnYY",
    ("campaign-flags", "get"):                        "nnnnYYnY",
    ("campaign-last-answer", "get"):                  "nnYnnnnn",
    ("disagreement-answers", "get"):                  "nnnnYYnY",
    ("assignment-flag", "post"):                      "nnYnnnnn",
    ("annotation-amend", "post"):                     "nnYnnnnn",
    # Reports show gold: staff, researchers, and members who read gold in a campaign and label in none.
    ("report", "get"):                                "nnnnYYYY",
}
QUERIES = {"report": {"benchmark": "diqad-demo"}, "evalrun-modes": {"benchmark": "diqad-demo"}}
# A body for writes whose refusal depends on it (the campaign named in the body decides the role).
BODIES = {"membership-list": lambda pks: {"campaign": pks["campaign"], "user": "user", "role": "viewer"}}


def api_routes():
    """{route name: (regex, view)} for every pattern under /api/v1/, however deeply it is included."""
    def walk(resolver, prefix):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern
    return {p.name: (route, p.callback) for route, p in walk(get_resolver(), "") if route.startswith("api/v1/")}


def allowed_methods(view):
    if actions := getattr(view, "actions", None):  # a viewset route: its method -> action map
        return {m for m in actions if m != "head"}
    cls = view.cls  # an APIView: the handlers it defines
    return {m for m in cls.http_method_names if m not in ("head", "options") and hasattr(cls, m)}


def endpoints():
    return {(name, method) for name, (_, view) in api_routes().items() for method in allowed_methods(view)}


def test_every_route_has_an_expectation():
    missing, stale = endpoints() - set(MATRIX), set(MATRIX) - endpoints()
    assert not missing, f"routes without an expectation (add them to MATRIX): {sorted(missing)}"
    assert not stale, f"expectations for routes that no longer exist: {sorted(stale)}"
    assert all(len(row) == len(ROLES) for row in MATRIX.values())


def url_for(name, pks):
    from django.urls import reverse
    route, view = api_routes()[name]
    if "(?P<" not in route:
        return reverse(name)
    kind = max((k for k in pks if name.startswith(k + "-")), key=len)
    lookup = getattr(view.cls, "lookup_url_kwarg", None) or getattr(view.cls, "lookup_field", "pk")
    return reverse(name, kwargs={lookup: pks[kind]})


def rows_of(response):
    body = response.json() if response["Content-Type"].startswith("application/json") else None
    return body["results"] if isinstance(body, dict) and "results" in body else body


@pytest.mark.django_db
def test_role_matrix(world):
    """Each (route, method, role) call runs in a rolled-back savepoint, so every role meets the same world;
    every mismatch is reported at once."""
    wrong = []
    for (name, method), row in sorted(MATRIX.items()):
        url = url_for(name, world.pks)
        for role, expected in zip(ROLES, row):
            client = APIClient()
            client.raise_request_exception = False  # a crash is a finding, not the end of the matrix
            if world.users[role] is not None:
                client.force_authenticate(world.users[role])
            with transaction.atomic():
                data = QUERIES.get(name) if method == "get" else BODIES.get(name, lambda pks: {})(world.pks)
                response = getattr(client, method)(url, data, format=None if method == "get" else "json")
                transaction.set_rollback(True)
            status = response.status_code
            if status >= 500:
                wrong.append(f"{method.upper()} {url} {role}: server error {status}")
                continue
            refused = status in (401, 403, 404)
            if not refused and method == "get" and isinstance(rows := rows_of(response), list):
                refused = not rows
            if refused != (expected == "n"):
                wrong.append(f"{method.upper()} {url} {role}: expected {'refused' if expected == 'n' else 'allowed'}, "
                             f"got {status} {response.content[:150]!r}")
    assert not wrong, "\n".join(wrong)
