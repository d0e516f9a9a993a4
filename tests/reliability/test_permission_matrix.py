"""Every /api/v1/ route of the whole URL conf, every method its view allows, every role.

The routes are read from `get_resolver()`, so an endpoint added anywhere without a row in MATRIX fails
`test_every_route_has_an_expectation`. Refused means 401/403, or 404 where the object stays hidden;
allowed means anything else below 500, and for a GET that answers a list, at least one row
(an empty list hides as well as a 403 does).

What an allowed reader sees is narrowed further for blind readers: a gold panel's voting experts
(test_gold_blind.py and the disagreement tests) and a QC under qc_blind, whose every allowed GET here, the
export, the pages and their own writes' answers are checked before and after their own label in
test_qc_blind_matrix.py.
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
    ("benchmark-list", "get"):                        "nnYYYYYY",
    ("benchmark-list", "post"):                       "nnnnnnnY",
    ("benchmark-detail", "get"):                      "nnYYYYYY",
    ("benchmark-detail", "put"):                      "nnnnnnnY",
    ("benchmark-detail", "patch"):                    "nnnnnnnY",
    ("benchmark-detail", "delete"):                   "nnnnnnnY",
    ("task-list", "get"):                             "nnYYYYYY",
    ("task-list", "post"):                            "nnnnnnnY",
    ("task-detail", "get"):                           "nnYYYYYY",
    ("task-detail", "put"):                           "nnnnnnnY",
    ("task-detail", "patch"):                         "nnnnnnnY",
    ("task-detail", "delete"):                        "nnnnnnnY",
    ("item-list", "get"):                             "nnnnYYYY",
    ("item-list", "post"):                            "nnnnnnnY",
    ("item-detail", "get"):                           "nnnnYYYY",
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
    ("batch-qc-figures", "get"):                      "nnnYnYnY",
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
    ("gold-version-list", "get"):                     "nnnnYYYY",
    ("gold-version-detail", "get"):                   "nnnnYYYY",
    ("gold-version-freeze", "post"):                  "nnnnnnnY",
    ("gold-version-labels", "get"):                   "nnnnYYYY",
    ("modelspec-list", "get"):                        "nnnnnnYY",
    ("modelspec-list", "post"):                       "nnnnnnnY",
    ("modelspec-detail", "get"):                      "nnnnnnYY",
    ("evalrun-list", "get"):                          "nnnnnnYY",
    ("evalrun-list", "post"):                         "nnnnnnYY",
    ("evalrun-train", "post"):                        "nnnnnnYY",
    ("evalrun-selfchat", "post"):                     "nnnnnnYY",
    ("evalrun-pairs", "post"):                        "nnnnnnYY",
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
    # A benchmark-wide report: staff and researchers (campaign reports: SCOPE_MATRIX below).
    ("report", "get"):                                "nnnnnnYY",
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
        for role, expected in zip(ROLES, row, strict=True):
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


# ---------------------------------------------------------------- across two campaigns
# Reports, source gold, gold versions and baseline for every role of the world's campaign ("campaign 1"),
# against campaign 1 and a second campaign on the same benchmark where none of them has a role (fixture
# `two_campaigns`: its own annotators and labels, and an unfrozen draft gold version). The researcher labels
# nowhere, so reads every campaign's gold and reports (not a baseline: a member's route). Allowed: a 200 that
# shows the thing; refused: anything else below 500 (401, 403, 404, a redirect to sign in, an empty list,
# items without `source_gold`).
SCOPE_MATRIX = {
    "report of campaign 1":                              "nnnnYYYY",
    "report of campaign 2":                              "nnnnnnYY",
    "benchmark-wide report":                             "nnnnnnYY",
    "report page of campaign 1":                         "nnnnYYYY",
    "report page of campaign 2":                         "nnnnnnYY",
    "report embed of campaign 1":                        "nnnnYYYY",
    "report embed of campaign 2":                        "nnnnnnYY",
    "benchmark-wide report page":                        "nnnnnnYY",
    "source gold of the campaigns' benchmark":           "nnnnYYYY",
    "source gold of a benchmark without campaigns":      "nnnnnnYY",
    "gold versions of campaign 1 (list)":                "nnnnYYYY",
    "gold versions of campaign 2 (list)":                "nnnnnnYY",
    "draft gold version of campaign 2":                  "nnnnnnYY",
    "draft gold labels of campaign 2":                   "nnnnnnYY",
    "gold labels of campaign 1":                         "nnnnYYYY",
    "baseline of campaign 1":                            "nnnnYYnY",
    "baseline of campaign 1 on campaign 2's draft":      "nnnnnnnn",
    "baseline of campaign 2":                            "nnnnnnnY",
}


def _report(campaign=None):
    return {"benchmark": "diqad-demo", **({"campaign": campaign} if campaign else {})}


def _rows(response):
    rows = rows_of(response)
    return rows if isinstance(rows, list) else []


def scope_probes(pks):
    """name -> (url, query, shows(response)): what each SCOPE_MATRIX row asks and what counts as shown."""
    c1, c2 = pks["campaign"], pks["campaign2"]
    ok = lambda response: response.status_code == 200  # noqa: E731
    listed = lambda response: response.status_code == 200 and bool(_rows(response))  # noqa: E731
    gold = lambda response: listed(response) and "source_gold" in _rows(response)[0]  # noqa: E731
    return {
        "report of campaign 1": ("/api/v1/reports/", _report(c1), ok),
        "report of campaign 2": ("/api/v1/reports/", _report(c2), ok),
        "benchmark-wide report": ("/api/v1/reports/", _report(), ok),
        "report page of campaign 1": ("/reports/diqad-demo/", {"campaign": c1}, ok),
        "report page of campaign 2": ("/reports/diqad-demo/", {"campaign": c2}, ok),
        "report embed of campaign 1": ("/reports/diqad-demo/embed/", {"campaign": c1}, ok),
        "report embed of campaign 2": ("/reports/diqad-demo/embed/", {"campaign": c2}, ok),
        "benchmark-wide report page": ("/reports/diqad-demo/", {}, ok),
        "source gold of the campaigns' benchmark": ("/api/v1/items/", {"benchmark": "diqad-demo"}, gold),
        "source gold of a benchmark without campaigns": ("/api/v1/items/", {"benchmark": "db-demo"}, gold),
        "gold versions of campaign 1 (list)": ("/api/v1/gold-versions/", {"campaign": c1}, listed),
        "gold versions of campaign 2 (list)": ("/api/v1/gold-versions/", {"campaign": c2}, listed),
        "draft gold version of campaign 2": (f"/api/v1/gold-versions/{pks['draft2']}/", {}, ok),
        "draft gold labels of campaign 2": (f"/api/v1/gold-versions/{pks['draft2']}/labels/", {}, listed),
        "gold labels of campaign 1": (f"/api/v1/gold-versions/{pks['gold1']}/labels/", {}, listed),
        "baseline of campaign 1": (f"/api/v1/campaigns/{c1}/baseline/", {}, ok),
        "baseline of campaign 1 on campaign 2's draft": (f"/api/v1/campaigns/{c1}/baseline/",
                                                         {"gold_version": pks["draft2"]}, ok),
        "baseline of campaign 2": (f"/api/v1/campaigns/{c2}/baseline/", {}, ok),
    }


@pytest.mark.django_db
def test_scope_matrix_across_two_campaigns(two_campaigns):
    world = two_campaigns
    probes = scope_probes(world.pks)
    assert set(probes) == set(SCOPE_MATRIX)
    wrong = []
    for name, row in SCOPE_MATRIX.items():
        url, query, shows = probes[name]
        for role, expected in zip(ROLES, row, strict=True):
            client = APIClient()
            client.raise_request_exception = False
            if world.users[role] is not None:
                client.force_login(world.users[role])
            response = client.get(url, query)
            if response.status_code >= 500:
                wrong.append(f"{name} {role}: server error {response.status_code}")
            elif shows(response) != (expected == "Y"):
                wrong.append(f"{name} {role}: expected {'shown' if expected == 'Y' else 'refused'}, got "
                             f"{response.status_code} {response.content[:150]!r}")
    assert not wrong, "\n".join(wrong)
