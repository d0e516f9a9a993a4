"""The manager's pages: upload, campaigns from presets, people, settings and batches, without the API or
the admin; refusals write nothing."""
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import actions
from annotation.models import Batch, BatchState, Campaign, CampaignSettings, Event, Membership, Protocol
from annotation.presets import PRESETS, meaning
from benchmarks.models import Benchmark, Item
from tests.annotation.conftest import dialogbench  # noqa: F401 (fixture)
from tests.conftest import DEMO_DATA

from .conftest import diqad_item, production


def signed_in(client, user):
    client.force_login(user)
    return client


def jsonl(*records):
    import json

    return "".join(json.dumps(r) + "\n" for r in records).encode()


def granted(username, *codenames):
    user = User.objects.create_user(username)
    for codename in codenames:
        app, code = codename.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=code))
    return User.objects.get(pk=user.pk)  # fresh: no permission cache


def test_upload_creates_a_benchmark_with_the_format_recognised(client, staff):
    data = jsonl(*(diqad_item(n) for n in range(1, 4)))
    response = signed_in(client, staff).post("/manage/upload/", {
        "file": SimpleUploadedFile("my-diqad.jsonl", data), "new_benchmark": "dq-up", "format": ""})
    assert response.status_code == 302 and response["Location"] == "/manage/?benchmark=dq-up"
    assert Item.objects.filter(task__benchmark__slug="dq-up").count() == 3
    page = client.get(response["Location"]).content.decode()
    assert "Imported my-diqad.jsonl as diqad" in page and "3 items created" in page


def test_upload_error_names_file_line_and_field_and_writes_nothing(client, staff):
    bad = diqad_item(2)
    del bad["label"]
    data = jsonl(diqad_item(1), bad)
    response = signed_in(client, staff).post("/manage/upload/", {
        "file": SimpleUploadedFile("broken.jsonl", data), "new_benchmark": "dq-bad", "format": "diqad"})
    body = response.content.decode()
    assert response.status_code == 400 and 'id="import-error"' in body
    assert "broken.jsonl:line 2: field &#x27;label&#x27;: missing" in body and "Nothing was imported" in body
    assert "/tmp" not in body  # the uploaded name, not where it was stored
    assert not Benchmark.objects.filter(slug="dq-bad").exists() and not Item.objects.exists()


def test_upload_into_an_existing_benchmark_and_an_unrecognised_file(client, staff):
    client = signed_in(client, staff)
    with open(DEMO_DATA / "dialogbench_sample.jsonl", "rb") as upload:
        client.post("/manage/upload/", {"file": upload, "new_benchmark": "db"})
    assert Item.objects.filter(task__benchmark__slug="db").count() == 12
    with open(DEMO_DATA / "dialogbench_sample.jsonl", "rb") as upload:
        again = client.post("/manage/upload/", {"file": upload, "benchmark": "db"})
    assert again.status_code == 302 and Item.objects.count() == 12
    odd = client.post("/manage/upload/", {"file": SimpleUploadedFile("odd.jsonl", b'{"x": 1}\n'), "benchmark": "db"})
    assert odd.status_code == 400 and "odd.jsonl:line 1" in odd.content.decode()
    taken = client.post("/manage/upload/", {"file": SimpleUploadedFile("a.jsonl", b'{"x": 1}\n'),
                                            "new_benchmark": "db"})
    assert taken.status_code == 400 and "exists already" in taken.content.decode()


def test_upload_needs_staff_or_the_permission(client, people):
    assert signed_in(client, people["ann1"]).get("/manage/upload/").status_code == 403
    response = client.post("/manage/upload/", {"file": SimpleUploadedFile("a.jsonl", jsonl(diqad_item(1))),
                                                "new_benchmark": "nope"})
    assert response.status_code == 403 and not Benchmark.objects.exists()
    importer = granted("importer", "benchmarks.add_item")
    assert signed_in(client, importer).get("/manage/upload/").status_code == 200


@pytest.mark.parametrize("key", list(PRESETS))
def test_new_campaign_form_shows_every_setting_with_its_meaning_and_the_preset(client, staff, diqad, key):
    page = signed_in(client, staff).get(f"/manage/campaigns/new/?benchmark={diqad}&preset={key}").content.decode()
    preset = PRESETS[key]
    for name in CampaignSettings.EDITABLE:
        fields = (["guidelines_en", "guidelines_zh_hans", "guidelines_ko"] if name == "guidelines_by_language"
                  else [name])
        assert all(f'name="{field}"' in page for field in fields), name
        assert meaning(name).replace("'", "&#x27;")[:40] in page, name
    for name, value in preset.settings.items():
        if isinstance(value, bool):
            assert (f'name="{name}" id="id_{name}" checked' in page) == value, name
        elif value is not None:
            assert re.search(rf'name="{name}"[^>]*value="{re.escape(str(value))}"', page) or \
                re.search(rf'<option value="{value}" selected', page), (name, value)
    assert f'<option value="{preset.protocol}" selected' in page


def test_creating_a_campaign_goes_through_the_action(client, diqad):
    manager = granted("lead", "annotation.add_campaign")
    client = signed_in(client, manager)
    values = PRESETS["diqad-production"].values()
    form = {k: ("" if v is None else v) for k, v in values.items() if not isinstance(v, bool)}
    form.update({"name": "DQ prod", "protocol": "production", "tasks": ["diqad-quality"], "benchmark": diqad,
                 "preset": "diqad-production", "overlap": 2, "qc_sample_size": 4, "overall_threshold": "0.95"})
    response = client.post("/manage/campaigns/new/", form)
    campaign = Campaign.objects.get(name="DQ prod")
    assert response.status_code == 302 and response["Location"] == f"/manage/campaigns/{campaign.pk}/members/"
    settings = campaign.settings
    assert (settings.overlap, settings.qc_sample_size, float(settings.overall_threshold)) == (2, 4, 0.95)
    assert Membership.objects.filter(campaign=campaign, user=manager, role="manager").exists()
    assert Event.objects.filter(campaign=campaign, kind="campaign_created", actor=manager).exists()
    bad = client.post("/manage/campaigns/new/", {**form, "name": "Bad", "overall_threshold": "1.5"})
    assert bad.status_code == 400 and not Campaign.objects.filter(name="Bad").exists()
    assert "overall_threshold" in bad.content.decode()


def test_a_benchmark_s_link_fills_the_first_preset(client, staff, diqad):
    page = signed_in(client, staff).get(f"/manage/campaigns/new/?benchmark={diqad}").content.decode()
    assert 'id="campaign-form"' in page and "errorlist" not in page
    assert '<option value="production" selected' in page


def test_new_campaign_needs_the_permission(client, people, diqad):
    response = signed_in(client, people["ann1"]).get(f"/manage/campaigns/new/?benchmark={diqad}")
    assert response.status_code == 403


@pytest.fixture
def campaign(staff, people, hostile):
    return production(staff, people, hostile)


def test_accounts_in_bulk_with_one_time_passwords(client, staff, campaign):
    response = signed_in(client, staff).post(f"/manage/campaigns/{campaign.pk}/members/", {
        "create": "", "a-people": "nina nina@example.org\nomar, omar@example.org\n\npia", "a-role": "annotator"})
    body = response.content.decode()
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    passwords = dict(re.findall(r'data-username="(\w+)"><td>\w+</td><td>[^<]*</td><td><code class="password">([^<]+)<',
                                body))
    assert set(passwords) == {"nina", "omar", "pia"}
    for name, password in passwords.items():
        user = User.objects.get(username=name)
        assert user.check_password(password) and password not in str(Event.objects.values_list("figures"))
        assert Membership.objects.get(campaign=campaign, user=user).role == "annotator"
    assert User.objects.get(username="omar").email == "omar@example.org"
    assert Event.objects.filter(campaign=campaign, kind="accounts_created").get().figures["usernames"] == \
        ["nina", "omar", "pia"]
    # Shown once: the page read again has no password on it.
    assert passwords["nina"] not in client.get(f"/manage/campaigns/{campaign.pk}/members/").content.decode()


def test_accounts_refused_as_a_whole(client, staff, campaign):
    before = User.objects.count()
    response = signed_in(client, staff).post(f"/manage/campaigns/{campaign.pk}/members/", {
        "create": "", "a-people": "fresh\nann1\nbad name!x\nzed not-an-email", "a-role": "qc"})
    body = response.content.decode()
    assert response.status_code == 400 and User.objects.count() == before
    assert "Line 2: an account ann1 exists already" in body and "Line 4" in body and "Line 3" in body


def test_accounts_need_staff_or_add_user(client, campaign, people):
    manager = people["manager"]  # manager of the campaign, without auth.add_user
    page = signed_in(client, manager).get(f"/manage/campaigns/{campaign.pk}/members/").content.decode()
    assert "accounts-form" not in page
    response = client.post(f"/manage/campaigns/{campaign.pk}/members/",
                           {"create": "", "a-people": "sneaky", "a-role": "annotator"})
    assert response.status_code == 400 and not User.objects.filter(username="sneaky").exists()
    manager.user_permissions.add(Permission.objects.get(codename="add_user"))
    manager = User.objects.get(pk=manager.pk)
    response = signed_in(client, manager).post(f"/manage/campaigns/{campaign.pk}/members/",
                                               {"create": "", "a-people": "allowed", "a-role": "annotator"})
    assert response.status_code == 200 and User.objects.filter(username="allowed").exists()


def test_members_added_and_removed_in_bulk(client, staff, campaign):
    for name in ("x1", "x2"):
        User.objects.create_user(name)
    url = f"/manage/campaigns/{campaign.pk}/members/"
    client = signed_in(client, staff)
    response = client.post(url, {"add": "", "m-usernames": "x1, x2", "m-role": "qc"})
    assert response.status_code == 302
    assert set(Membership.objects.filter(campaign=campaign, role="qc", active=True)
               .values_list("user__username", flat=True)) == {"qc", "x1", "x2"}
    refused = client.post(url, {"add": "", "m-usernames": "x1 ghost", "m-role": "expert"})
    assert refused.status_code == 400 and "No account ghost." in refused.content.decode()
    assert not Membership.objects.filter(campaign=campaign, role="expert", user__username="x1").exists()
    client.post(url, {"remove": "", "m-usernames": "x1\nx2", "m-role": "qc"})
    assert set(Membership.objects.filter(campaign=campaign, role="qc", active=True)
               .values_list("user__username", flat=True)) == {"qc"}
    kinds = list(Event.objects.filter(campaign=campaign).values_list("kind", flat=True))
    assert kinds.count("member_deactivated") == 2
    membership = Membership.objects.get(campaign=campaign, role="qc", user__username="x1")
    client.post(f"/manage/memberships/{membership.pk}/active/", {"active": "1"})
    membership.refresh_from_db()
    assert membership.active


def test_only_managers_reach_a_campaign_s_pages(client, campaign, people):
    signed_in(client, people["ann1"])
    for url in (f"/manage/campaigns/{campaign.pk}/", f"/manage/campaigns/{campaign.pk}/members/",
                f"/manage/campaigns/{campaign.pk}/settings/", "/manage/"):
        assert client.get(url).status_code == 403, url
    assert client.post(f"/manage/campaigns/{campaign.pk}/cut/").status_code == 403
    home = client.get("/").content.decode()
    assert "/manage/" not in home
    manager_home = signed_in(client, people["manager"]).get("/").content.decode()
    assert 'id="manage-link"' in manager_home and f"/manage/campaigns/{campaign.pk}/" in manager_home


def test_cut_batches_hand_in_and_where_every_batch_stands(client, staff, people, hostile):
    campaign = actions.create_campaign(actor=staff, name="Two batches", benchmark=hostile, protocol="production",
                                       settings={"overlap": 1, "batch_size": 2, "qc_sample_size": 2,
                                                 "auto_hand_in": False})
    actions.add_member(campaign, actor=staff, user=people["ann1"], role="annotator")
    client = signed_in(client, staff)
    client.post(f"/manage/campaigns/{campaign.pk}/cut/")
    assert campaign.batches.count() == 2
    again = client.post(f"/manage/campaigns/{campaign.pk}/cut/", follow=True).content.decode()
    assert "already in a batch" in again
    from tests.annotation.conftest import submit_score

    first = campaign.batches.get(number=1)
    while (lease := actions.lease_next_item(campaign, annotator=people["ann1"])) and \
            lease.assignment.batch_item.batch_id == first.pk:
        submit_score(lease.assignment, people["ann1"], 2)
    page = client.get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert 'data-batch="1" data-state="annotating"' in page and "batch_started" in page
    client.post(f"/manage/batches/{first.pk}/hand-in/")
    first.refresh_from_db()
    assert first.state == BatchState.HANDED_IN
    page = client.get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert 'data-batch="1" data-state="handed_in"' in page and "handed_in" in page and "2/2" in page
    unfinished = Batch.objects.get(campaign=campaign, number=2)
    refused = client.post(f"/manage/batches/{unfinished.pk}/hand-in/", follow=True).content.decode()
    assert "have no final label yet" in refused


def test_settings_change_makes_a_version_once_a_batch_started(client, staff, campaign, people):
    url = f"/manage/campaigns/{campaign.pk}/settings/"
    client = signed_in(client, staff)
    page = client.get(url).content.decode()
    for name in CampaignSettings.EDITABLE:
        if name != "guidelines_by_language":  # a field per language (test_guidelines_per_language_in_the_form)
            assert f'name="{name}"' in page
    values = {k: ("" if v is None else v) for k, v in campaign.settings.values().items()
              if not isinstance(v, (bool, dict))}
    client.post(url, {**values, "qc_sample_size": 3, "note": "smaller sample"})
    assert campaign.settings_versions.count() == 1 and campaign.settings_versions.get().qc_sample_size == 3
    actions.lease_next_item(campaign, annotator=people["ann1"])  # the batch starts under version 1
    response = client.post(url, {**values, "qc_sample_size": 2, "note": "even smaller"}, follow=True)
    assert "version 2, a new version" in response.content.decode()
    assert [v.qc_sample_size for v in campaign.settings_versions.order_by("version")] == [3, 2]
    bad = client.post(url, {**values, "overlap": 0})
    assert bad.status_code == 400 and campaign.settings_versions.count() == 2


def test_guidelines_per_language_in_the_form(client, staff, campaign):
    """A text field per language of the site, labelled with the language's name; the texts filled in become the
    settings' guidelines_by_language, the empty ones are left out; emptied again, the language is gone."""
    url = f"/manage/campaigns/{campaign.pk}/settings/"
    client = signed_in(client, staff)
    page = client.get(url).content.decode()
    for name, label in (("guidelines_en", "Guidelines in English"), ("guidelines_zh_hans", "Guidelines in Simplified "
                        "Chinese (简体中文)"), ("guidelines_ko", "Guidelines in Korean (한국어)")):
        assert f'name="{name}"' in page and label in page
    assert 'lang="ko"' in page
    values = {k: ("" if v is None else v) for k, v in campaign.settings.values().items()
              if not isinstance(v, (bool, dict))}
    response = client.post(url, {**values, "guidelines_ko": "# 지침", "guidelines_zh_hans": "", "note": "Korean"},
                           follow=True)
    assert "guidelines_by_language" in response.content.decode()
    assert campaign.settings_versions.get().guidelines_by_language == {"ko": "# 지침"}
    assert "# 지침</textarea>" in client.get(url).content.decode()  # shown again for the next change
    client.post(url, {**values, "guidelines_ko": "", "note": "no Korean"})
    assert campaign.settings_versions.get().guidelines_by_language == {}


def test_baseline_preset_sample(client, staff, dialogbench):
    """The DialogBench preset's protocol and k reach the campaign."""
    values = PRESETS["dialogbench-baseline"].values()
    form = {k: ("" if v is None else v) for k, v in values.items() if not isinstance(v, bool)}
    form.update({"name": "DB base", "protocol": "human_baseline", "benchmark": dialogbench,
                 "preset": "dialogbench-baseline",
                 "tasks": list(Benchmark.objects.get(slug=dialogbench).tasks.values_list("slug", flat=True))})
    response = signed_in(client, staff).post("/manage/campaigns/new/", form)
    campaign = Campaign.objects.get(name="DB base")
    assert response.status_code == 302 and campaign.protocol == Protocol.HUMAN_BASELINE
    assert (campaign.settings.overlap, campaign.settings.items_per_task) == (3, 50)
    assert campaign.tasks.count() == 5
