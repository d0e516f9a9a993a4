"""What a person may see in a campaign is resolved once per request (policy.CampaignAccess, memoised on the request
by policy.access_for) and read by the permissions, serializers, views, templates and scripts; and each of its rules
lives in policy.py alone."""
import ast
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation import actions, policy
from annotation.models import Disagreement

from .conftest import api, make_campaign, submit_score

ROOT = Path(__file__).resolve().parents[2]


def membership_reads(queries):
    """The queries that read memberships (as the main table or in a subquery), each SQL shortened."""
    return [q["sql"][:200] for q in queries if "\"annotation_membership\"" in (q["sql"] or "")]


def roles_reads(queries):
    """The queries that read the person's roles: those whose outermost table is the memberships."""
    return [q["sql"] for q in queries if (q["sql"] or "").split(" FROM ", 1)[-1].startswith('"annotation_membership"')]


@pytest.fixture
def in_review(staff, people, diqad):
    """Batch 1 of a qc_blind campaign labelled twice, its disagreement decided, handed in and under review."""
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=4, qc_sample_size=2, qc_blind=True, seed=1,
                             disagreement_policy="adjudicate")
    first, _ = actions.cut_batches(campaign, actor=staff)
    for name, scores in (("ann1", [2, 2, 2, 2]), ("ann2", [1, 2, 2, 2])):
        for score in scores:
            lease = actions.lease_next_item(campaign, annotator=people[name])
            if lease.assignment.batch_item.batch_id != first.pk:
                break
            submit_score(lease.assignment, people[name], score)
    for disagreement in Disagreement.objects.filter(campaign=campaign):
        actions.resolve_disagreement(disagreement, actor=people["expert"], value=2, reason="rule 3")
    actions.hand_in_batch(first, actor=staff)
    actions.start_review(first, actor=people["qc"])
    return campaign, first


def page(user, url):
    client = Client()
    client.force_login(user)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response, queries.captured_queries


def call(user, url):
    client = api(user)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response, queries.captured_queries


@pytest.mark.django_db
def test_a_request_reads_the_persons_roles_once(in_review, people):
    campaign, batch = in_review
    disagreement = Disagreement.objects.filter(campaign=campaign).first()
    assert disagreement is not None
    for who, kind, url in (("qc", page, f"/batches/{batch.pk}/review/"),
                           ("qc", call, f"/api/v1/batches/{batch.pk}/qc_sample/"),
                           ("qc", call, f"/api/v1/batches/{batch.pk}/events/"),
                           ("qc", call, f"/api/v1/batches/{batch.pk}/items/"),
                           ("expert", page, f"/campaigns/{campaign.pk}/disagreements/"),
                           ("expert", call, f"/api/v1/disagreements/{disagreement.pk}/answers/"),
                           ("expert", call, f"/api/v1/campaigns/{campaign.pk}/flags/"),
                           ("manager", page, f"/campaigns/{campaign.pk}/dashboard/")):
        response, queries = kind(people[who], url)
        assert response.status_code == 200, (url, response.status_code)
        # The permission, the blindness (votes, QC) and the page's flags ask one access object: one roles query.
        assert len(roles_reads(queries)) == 1, (url, roles_reads(queries))
        if who == "qc":
            # What the blind QC may not read yet is found without asking their memberships again (the only other
            # membership read is the campaigns they belong to).
            assert len(membership_reads(queries)) <= 2, (url, membership_reads(queries))


@pytest.mark.django_db
def test_the_access_is_memoised_on_the_request_and_shared_with_drf(in_review, people):
    from django.test import RequestFactory
    from rest_framework.request import Request

    campaign, _ = in_review
    request = RequestFactory().get("/")
    request.user = people["qc"]
    with CaptureQueriesContext(connection) as queries:
        first = policy.access_for(request, campaign)
        again = policy.access_for(Request(request), campaign)
    assert first is again and len(queries.captured_queries) == 1
    assert first.reviews and first.reads_as_blind_qc and not first.votes_blind and not first.may_manage


# The rules of access (who reads labels, who votes blind, who reviews blind, what a blind QC may not read) are
# asked of the access object outside policy.py: no module re-decides them from roles or calls the per-user tests.
GONE = re.compile(r"(?<![.\w])(can_read_labels|votes_blind|reviews_blind|reads_as_blind_qc|qc_blind_batch|"
                  r"request_roles)\(|"
                  r"policy\.(can_read_labels|votes_blind|reviews_blind|reads_as_blind_qc|qc_blind_batch)\b|"
                  r"policy\.(roles_of|staff_roles)\(|\broles *&|Role\.[A-Z]+ in roles\b|CanReadLabels\(\)")
CHECKED = ("annotation/api.py", "annotation/serializers.py", "annotation/permissions.py", "annotation/selectors",
           "frontend")


def sources():
    for name in CHECKED:
        path = ROOT / name
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def test_views_serializers_and_permissions_ask_the_access_object():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in sources()
             for n, line in enumerate(path.read_text().splitlines(), 1) if GONE.search(line)]
    assert not found, found


def test_policy_has_no_second_per_user_test_of_the_access_rules():
    tree = ast.parse((ROOT / "annotation/policy.py").read_text())
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert not functions & {"can_read_labels", "votes_blind", "reads", "reviews_blind", "reads_as_blind_qc",
                            "qc_blind_batch", "can_read_gold"}, "ask policy.access_of / access_for instead"


def test_templates_and_scripts_read_flags_not_roles():
    templates = list((ROOT / "frontend/templates").rglob("*.html"))
    scripts = list((ROOT / "frontend/static/frontend/js").glob("*.js"))
    role_test = re.compile(r"\{%\s*(el)?if\b[^%]*\b(roles|is_staff|role|worker_role)\b[^%]*%\}")
    assert templates and scripts
    assert not [str(p) for p in templates if role_test.search(p.read_text())]
    code = {p: re.sub(r"^\s*//.*$", "", p.read_text(), flags=re.M) for p in scripts}  # comments may name roles
    assert not [str(p) for p, text in code.items()
                if re.search(r"\b(roles|my_roles|is_staff|worker_role)\b|[\"'](manager|qc|expert)[\"']\s*(===|\))",
                            text)]


@pytest.mark.django_db
def test_the_access_object_and_the_cross_campaign_queries_agree_on_every_role_set(staff, diqad):
    """The blind QC, the blind voter and who reads a campaign's gold are asked per campaign of CampaignAccess (from
    the roles) and across campaigns in SQL (labels_visible, qc_hidden_items, campaigns_with_readable_gold): for
    every set of roles in a campaign where annotators label and one where experts do, both give one answer."""
    from itertools import combinations

    from django.contrib.auth.models import User

    from annotation.models import Campaign, Membership, Role

    labelled = make_campaign(staff, {}, diqad, roles={})
    panel = make_campaign(staff, {}, diqad, protocol="gold_panel", roles={})
    assert labelled.worker_role == Role.ANNOTATOR and panel.worker_role == Role.EXPERT
    role_sets = [set(c) for n in (1, 2) for c in combinations(sorted(Role.values), n)]
    users = []
    for n, roles in enumerate(role_sets):
        user = User.objects.create_user(f"r{n}")
        Membership.objects.bulk_create(Membership(campaign=c, user=user, role=r) for c in (labelled, panel)
                                       for r in roles)
        users.append(user)
    users.append(staff)
    for user in users:
        blind_qc = set(policy._blind_qc_campaigns(user).values_list("campaign_id", flat=True))
        readers = policy.campaigns_reading(user, policy.READ_LABELS)
        readers = None if readers is None else set(readers.values_list("campaign_id", flat=True))
        gold = policy.campaigns_with_readable_gold(user, Campaign.objects.all())
        for campaign in (labelled, panel):
            access = policy.access_of(user, campaign)
            assert access.reads_as_blind_qc == (campaign.pk in blind_qc), (user, campaign.worker_role)
            assert access.reads_labels == (readers is None or campaign.pk in readers), (user, campaign.worker_role)
            assert access.reads_gold == (campaign.pk in gold), (user, campaign.worker_role)


@pytest.mark.django_db
def test_the_home_page_offers_manage_from_the_access_flag(in_review, people, staff):
    campaign, _ = in_review
    link = f'href="/manage/campaigns/{campaign.pk}/"'
    for who, shown in ((people["manager"], True), (staff, True), (people["qc"], False), (people["ann1"], False)):
        response, _queries = page(who, "/")
        assert response.status_code == 200
        assert (link in response.content.decode()) is shown, who


@pytest.mark.django_db
def test_the_dashboard_offers_the_report_to_who_reads_the_campaigns_gold(in_review, people, staff):
    campaign, _ = in_review
    for who, shown in (("manager", True), ("viewer", True), ("expert", True), ("qc", False), ("trainer", False)):
        response, _queries = page(people[who], f"/campaigns/{campaign.pk}/dashboard/")
        assert response.status_code == 200
        assert (f'data-report="{"1" if shown else ""}"' in response.content.decode()) is True, who
        assert (campaign.pk in policy.campaigns_with_readable_gold(people[who], type(campaign).objects.all())) is shown
