"""Pages by role: what each person is shown, what they are refused, and what never reaches the HTML."""
import re

import pytest
from django.contrib.auth.models import Group, User

from annotation import actions
from annotation.models import Annotation
from benchmarks.models import Item

from .conftest import SCRIPT, production, submit_score


def signed_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def campaign(staff, people, hostile):
    return production(staff, people, hostile)


def label_everything(campaign, user, score=2):
    while lease := actions.lease_next_item(campaign, annotator=user):
        submit_score(lease.assignment, user, score)


def test_home_shows_each_role_what_waits(client, campaign, people, staff):
    page = signed_in(client, people["ann1"]).get("/").content.decode()
    assert campaign.name in page and f"/campaigns/{campaign.pk}/annotate/" in page and "4 items waiting" in page
    assert "/review/" not in page and "Dashboard" not in page and "Model runs" not in page
    label_everything(campaign, people["ann1"])
    batch = campaign.batches.get()
    actions.hand_in_batch(batch, actor=staff)
    qc_page = signed_in(client, people["qc"]).get("/").content.decode()
    assert f"/batches/{batch.pk}/review/" in qc_page and "Review batch 1" in qc_page
    expert_page = signed_in(client, people["expert"]).get("/").content.decode()
    assert f"/campaigns/{campaign.pk}/disagreements/" in expert_page and "0 open" in expert_page


def test_researcher_sees_runs_reports_and_dashboard(client, campaign, people):
    people["viewer"].groups.add(Group.objects.get_or_create(name="researchers")[0])
    page = signed_in(client, people["viewer"]).get("/").content.decode()
    assert "/runs/" in page and "/reports/hostile/" in page and f"/campaigns/{campaign.pk}/dashboard/" in page
    for url in ("/runs/", f"/campaigns/{campaign.pk}/dashboard/", "/reports/hostile/"):
        assert client.get(url).status_code == 200, url
    embed = client.get("/reports/hostile/embed/")
    assert embed.status_code == 200 and embed["X-Frame-Options"] == "SAMEORIGIN"
    assert "script-src" not in embed["Content-Security-Policy"] and b"<script" not in embed.content


def test_annotator_is_refused_other_pages_and_nothing_leaks(client, campaign, people, staff):
    ann1, ann2 = people["ann1"], people["ann2"]
    other = actions.lease_next_item(campaign, annotator=ann2).assignment
    submit_score(other, ann2, 0)  # ann2's label: score 0 with a reason
    label_everything(campaign, ann2, score=1)
    batch = campaign.batches.get()
    actions.hand_in_batch(batch, actor=staff)
    gold_item = Item.objects.get(external_id="x-003")  # source gold: score 0
    signed_in(client, ann1)
    for url in (f"/assignments/{other.pk}/", f"/batches/{batch.pk}/review/",
                "/reports/hostile/", "/reports/hostile/embed/", "/runs/", f"/campaigns/{campaign.pk}/dashboard/",
                f"/campaigns/{campaign.pk}/disagreements/"):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 403, url
        assert "Not allowed" in body and 'id="refusal"' in body
        for secret in ("not_relevant", "incomplete", "reasons_", '"score"', "x-003", "source_gold", SCRIPT, "Turn 0"):
            assert secret not in body, (url, secret)
    assert Annotation.objects.filter(annotator=ann2).exists() and gold_item.source_gold["score"] == 0


def test_workspace_page_carries_no_item_data_and_no_inline_script(client, campaign, people):
    lease = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    response = signed_in(client, people["ann1"]).get(f"/assignments/{lease.pk}/")
    body = response.content.decode()
    assert response.status_code == 200 and f'data-assignment="{lease.pk}"' in body
    # The item arrives through the API as JSON and is written with textContent: never in the HTML.
    assert "Hello" not in body and "window.pwned" not in body
    scripts = re.findall(r"<script[^>]*>", body)
    # The translation catalog (Django's JavaScriptCatalog) is a classic script, from this site like the modules.
    assert scripts and all('src="' in tag and ('type="module"' in tag or 'src="/jsi18n/' in tag) for tag in scripts)
    assert re.search(r'data-csrf="[A-Za-z0-9]{32,}"', body)
    # A non-member is refused the workspace too.
    outsider = User.objects.create_user("nobody")
    assert signed_in(client, outsider).get(f"/campaigns/{campaign.pk}/annotate/").status_code == 403


def directives(response):
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_every_page_forbids_inline_script(client, campaign, people, staff):
    lease = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    pages = {people["ann1"]: ["/", f"/assignments/{lease.pk}/", f"/campaigns/{campaign.pk}/annotate/"],
             staff: ["/runs/", f"/campaigns/{campaign.pk}/dashboard/", "/reports/hostile/", "/admin/",
                     "/api/v1/benchmarks/", "/api/docs/", "/api/redoc/"]}
    for user, urls in pages.items():
        signed_in(client, user)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            policy = directives(response)
            assert policy["script-src"] == ["'self'"] and policy["object-src"] == ["'none'"], (url, policy)
            assert policy["base-uri"] == ["'none'"] and policy["frame-ancestors"] == ["'self'"], (url, policy)
            # Only the API docs may set styles inline; nothing may run inline script.
            docs = url.startswith(("/api/docs/", "/api/redoc/"))
            assert ("'unsafe-inline'" in policy["style-src"]) == docs, (url, policy)
    assert signed_in(client, people["ann1"]).get("/accounts/login/")["Content-Security-Policy"]
    # The framed report keeps its own stricter policy: no script at all.
    assert directives(signed_in(client, staff).get("/reports/hostile/embed/"))["default-src"] == ["'none'"]


def test_api_writes_need_the_csrf_token(campaign, people):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(people["ann1"])
    page = client.get(f"/campaigns/{campaign.pk}/annotate/").content.decode()
    token = re.search(r'data-csrf="([^"]+)"', page).group(1)
    url = f"/api/v1/campaigns/{campaign.pk}/next/"
    assert client.post(url).status_code == 403
    assert client.post(url, HTTP_X_CSRFTOKEN=token).status_code == 200


def test_live_qc_figures_follow_the_rule(client, campaign, people, staff):
    label_everything(campaign, people["ann1"])
    batch = campaign.batches.get()
    actions.hand_in_batch(batch, actor=staff)
    actions.start_review(batch, actor=people["qc"])
    sample = list(batch.reviews.get().sample.order_by("position"))
    signed_in(client, people["qc"])
    assert client.get(f"/batches/{batch.pk}/review/").status_code == 200
    for entry, value in zip(sample, (2, 2, 2, 1), strict=False):
        actions.record_qc_label(batch, actor=people["qc"], batch_item_id=entry.batch_item_id, value=value)
    figures = client.get(f"/api/v1/batches/{batch.pk}/qc_figures/").json()
    assert figures["n"] == 4 and figures["correct"] == 3 and figures["passed"] is False
    assert figures["per_class"]["1"]["accuracy"] == 0.0 and figures["sample"] == 4


def test_report_page_lets_the_reader_choose_the_rule_and_the_flags(client, campaign, staff):
    signed_in(client, staff)
    page = client.get("/reports/hostile/", {"rule": "acc", "min_items": "5"}).content.decode()
    assert re.search(r'<option value="acc" selected>', page) and 'name="min_items" min="0" value="5"' in page
    frame = re.search(r'id="report-frame"[^>]*src="([^"]+)"', page, re.S).group(1)
    assert "rule=acc" in frame and "min_items=5" in frame
    assert "/reports/hostile/download/csv/?benchmark=hostile&amp;rule=acc&amp;min_items=5\"" in page
    embed = client.get("/reports/hostile/embed/", {"rule": "acc", "min_items": "5"}).content.decode()
    assert "acc for every log-likelihood run" in embed  # the report says which rule its gap uses
    plain = client.get("/reports/hostile/embed/").content.decode()
    assert "each run&#x27;s own rule" in plain or "each run's own rule" in plain
    for bad in ({"rule": "best"}, {"min_items": "-1"}, {"min_raters": "x"}):
        for url in ("/reports/hostile/", "/reports/hostile/embed/"):
            answer = client.get(url, bad)
            assert answer.status_code == 400 and b"invalid_query" in answer.content, (url, bad)
