"""The pages' language: a person's own choice kept on their account (the switcher on every page), else their
campaign's language (a campaign setting), else the browser's; the API's refusals keep their codes and translate
their texts."""
import json

import pytest
from django.test import Client

from annotation import actions
from core.errors import ActionError
from frontend.models import Preferences
from tests.annotation.conftest import DIQAD_ANSWERS, api, make_campaign, sid

pytestmark = pytest.mark.django_db


def lang_of(html):
    return html.split('<html lang="', 1)[1].split('"', 1)[0]


@pytest.fixture
def chinese_campaign(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=1, batch_size=10, qc_sample_size=1, language="zh-hans")
    actions.cut_batches(campaign, actor=staff)
    return campaign


def test_the_campaign_language_is_the_default_and_the_switcher_keeps_a_choice_on_the_account(people, chinese_campaign):
    ann = people["ann1"]
    client = Client()
    client.force_login(ann)
    home = client.get("/").content.decode()
    assert lang_of(home) == "zh-hans" and "我的工作" in home and "退出登录" in home
    assert 'action="/i18n/setlang/"' in home and '<option value="ko" lang="ko"' in home
    # The switcher: back to the page, the choice kept on the account.
    answer = client.post("/i18n/setlang/", {"language": "ko", "next": "/"})
    assert answer.status_code == 302 and answer["Location"] == "/"
    assert Preferences.objects.get(user=ann).language == "ko"
    assert "내 작업" in client.get("/").content.decode()
    # Another browser (no cookie): the account's choice still holds.
    other = Client()
    other.force_login(ann)
    page = other.get(f"/campaigns/{chinese_campaign.pk}/annotate/").content.decode()
    assert lang_of(page) == "ko" and "내 답" in page and "/jsi18n/?l=ko" in page
    # The scripts' catalog in that language.
    assert json.dumps("저장되었습니다.") in other.get("/jsi18n/?l=ko").content.decode()


def test_without_a_campaign_language_the_browser_decides(people, staff, diqad):
    make_campaign(staff, people, diqad)
    client = Client(HTTP_ACCEPT_LANGUAGE="ko")
    assert "로그인" in client.get("/accounts/login/").content.decode()
    client.force_login(people["ann2"])
    assert lang_of(client.get("/").content.decode()) == "ko"
    assert lang_of(Client().get("/accounts/login/").content.decode()) == "en"


def test_api_refusals_keep_their_codes_and_translate_their_texts(people, chinese_campaign):
    client = api(people["ann1"])
    answer = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/", HTTP_ACCEPT_LANGUAGE="ko")
    assert answer.status_code == 200 and answer.json()["detail"] == "새 항목입니다."
    client = Client()
    client.force_login(people["ann1"])  # the campaign's language, from the session, for the page's API calls
    client.get("/")
    body = client.get(f"/api/v1/campaigns/{chinese_campaign.pk}/last_answer/").json()
    assert body["detail"] == "您在这里没有仍可修改的答案。"


def test_question_and_option_names_in_the_persons_language(people, chinese_campaign):
    """A task's form may name its questions and options per language (`labels`); a person sees their language's,
    else the form's own label."""
    from benchmarks.formschema import localized
    from benchmarks.models import Task

    task = Task.objects.get(campaigns=chinese_campaign)
    score = next(q for q in task.form["questions"] if q["key"] == "score")
    score["labels"] = {"zh-hans": "质量", "ko": "품질"}
    score["options"][0]["labels"] = {"zh": "2：满足所有维度"}
    score["options"][1].pop("labels", None)
    task.save(update_fields=["form"])
    client = Client()
    client.force_login(people["ann1"])  # the campaign's language: zh-hans
    client.get("/")
    lease = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/").json()["assignment"]
    shown = next(q for q in lease["form"]["questions"] if q["key"] == "score")
    assert shown["label"] == "质量" and shown["options"][0]["label"] == "2：满足所有维度"
    assert shown["options"][1]["label"] == score["options"][1]["label"]  # no Chinese name given: the form's own
    assert next(q for q in localized(task.form, "ko")["questions"] if q["key"] == "score")["label"] == "품질"
    assert localized(task.form, "en") == task.form and localized(task.form, None) is task.form


GUIDELINES = "# Guidelines\n\nScore the answer."
KOREAN = "# 지침\n\n답변의 점수를 매기세요."


def test_guidelines_in_the_persons_language_else_the_default(people, staff, diqad):
    """A campaign may give its guidelines per language: a person whose pages are Korean reads the Korean text in
    their lease, one in English (no English text given) the default guidelines."""
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=10, qc_sample_size=1,
                             guidelines=GUIDELINES, guidelines_by_language={"ko": KOREAN})
    actions.cut_batches(campaign, actor=staff)
    Preferences.objects.create(user=people["ann1"], language="ko")
    Preferences.objects.create(user=people["ann2"], language="en")
    shown = {}
    for name in ("ann1", "ann2"):
        client = Client()
        client.force_login(people[name])
        client.get("/")  # the account's language, kept in the session, for the page's API calls
        shown[name] = client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]["guidelines"]
    assert shown["ann1"]["language"] == "ko" and shown["ann1"]["markdown"] == KOREAN
    assert "<h1>지침</h1>" in shown["ann1"]["html"]
    assert shown["ann2"]["language"] is None and shown["ann2"]["markdown"] == GUIDELINES
    assert "<h1>Guidelines</h1>" in shown["ann2"]["html"]
    assert shown["ann1"]["version"] == shown["ann2"]["version"] == 1
    # Without a preference the browser's language decides, through the API too.
    answer = api(people["ann3"]).post(f"/api/v1/campaigns/{campaign.pk}/next/", HTTP_ACCEPT_LANGUAGE="ko")
    assert answer.json()["assignment"]["guidelines"]["markdown"] == KOREAN


def test_guidelines_per_language_through_the_api_and_an_unknown_language_refused(people, staff, diqad):
    campaign = make_campaign(staff, people, diqad, guidelines=GUIDELINES)
    client = api(staff)
    url = f"/api/v1/campaigns/{campaign.pk}/settings/"
    answer = client.post(url, {"guidelines_by_language": {"zh-hans": "# 指南", "ko": KOREAN}}, format="json")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["guidelines_by_language"] == {"zh-hans": "# 指南", "ko": KOREAN}
    assert client.get(url).json()["results"][-1]["guidelines_by_language"]["ko"] == KOREAN
    before = list(campaign.settings_versions.values_list("version", "guidelines_by_language"))
    refused = client.post(url, {"guidelines_by_language": {"ko": "x", "fr": "Les consignes"}}, format="json")
    assert refused.status_code == 400
    assert "Unknown language 'fr'" in refused.json()["errors"]["guidelines_by_language"][0]
    assert "en, zh-hans, ko" in refused.json()["errors"]["guidelines_by_language"][0]
    assert list(campaign.settings_versions.values_list("version", "guidelines_by_language")) == before
    # The action refuses it too (the one check on the model field), with the field named.
    with pytest.raises(ActionError) as error:
        actions.update_settings(campaign, actor=staff, changes={"guidelines_by_language": {"de": "Richtlinien"}})
    assert error.value.code == "invalid_settings" and "Unknown language 'de'" in \
        error.value.extra["errors"]["guidelines_by_language"][0]
    assert list(campaign.settings_versions.values_list("version", "guidelines_by_language")) == before


def test_an_annotator_s_refusals_in_english_and_korean_keep_their_codes(people, chinese_campaign):
    """The same refusals asked for in English and in Korean: the same status and code, the text translated."""
    from annotation.models import Annotation

    client = api(people["ann1"])
    leases = []
    for _ in range(2):
        lease = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/").json()["assignment"]
        client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                    {"answers": DIQAD_ANSWERS[2], "client_submission_id": sid()}, format="json")
        leases.append(lease)
    first = Annotation.objects.get(assignment_id=leases[0]["id"])
    url = f"/api/v1/assignments/{leases[1]['id']}/"
    answers = {}
    for language in ("en", "ko"):
        again = client.post(url + "submit/", {"answers": DIQAD_ANSWERS[1], "client_submission_id": sid()},
                            format="json", HTTP_ACCEPT_LANGUAGE=language)
        earlier = client.post(f"/api/v1/annotations/{first.pk}/amend/",
                              {"answers": DIQAD_ANSWERS[1], "item": first.item_id}, format="json",
                              HTTP_ACCEPT_LANGUAGE=language)
        malformed = client.post(url + "submit/", {"answers": "none"}, format="json", HTTP_ACCEPT_LANGUAGE=language)
        answers[language] = [(r.status_code, r.json()["code"], r.json()["detail"]) for r in (again, earlier, malformed)]
    assert [(status, code) for status, code, _ in answers["en"]] == \
        [(status, code) for status, code, _ in answers["ko"]] == \
        [(409, "already_submitted"), (409, "not_changeable"), (400, "invalid")]
    assert [detail for *_, detail in answers["en"]] == [
        "This item was already submitted.", "Only your last answer can be changed.", "Some fields are not valid."]
    assert [detail for *_, detail in answers["ko"]] == [
        "이 항목은 이미 제출되었습니다.", "마지막 답만 바꿀 수 있습니다.", "올바르지 않은 필드가 있습니다."]


def test_a_refusal_with_figures_in_chinese(people, chinese_campaign):
    """A text with figures: the figures go into the translation, and travel beside it unchanged."""
    from annotation.models import Assignment, LeaseStatus

    client = api(people["ann1"])
    lease = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/").json()["assignment"]
    Assignment.objects.filter(pk=lease["id"]).update(status=LeaseStatus.RELEASED)
    answer = client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                         {"answers": DIQAD_ANSWERS[2], "client_submission_id": sid()}, format="json",
                         HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 409 and answer.json()["code"] == "lease_closed"
    assert answer.json()["detail"] == "此分配处于 released 状态；请领取下一条。"


def test_the_built_in_forms_name_their_questions_and_options_in_chinese_and_korean():
    """DiQAD's form (its people worked in Chinese) and the multiple-choice form of DialogBench and KoDialogBench
    name every question and option in both languages; the English names and the values stay."""
    from benchmarks.formschema import localized, validate_form
    from benchmarks.importers.dialogbench import multiple_choice_form
    from benchmarks.importers.diqad import quality_form

    for form in (quality_form(), multiple_choice_form()):
        validate_form(form)
        for language in ("zh-hans", "ko"):
            shown = localized(form, language)
            for question, english in zip(shown["questions"], form["questions"], strict=True):
                assert question["label"] != english["label"] and question["key"] == english["key"]
                if isinstance(english.get("options"), list):  # "item": the item's own options, named by the item
                    for option, own in zip(question["options"], english["options"], strict=True):
                        assert option["label"] != own["label"] and option["value"] == own["value"]
    chinese = localized(quality_form(), "zh-hans")["questions"]
    assert chinese[1]["label"] == "质量" and chinese[1]["options"][0]["label"] == "2：满足所有维度"
    assert localized(multiple_choice_form(), "ko")["questions"][0]["label"] == "가장 알맞은 보기를 고르세요"
    assert localized(quality_form(), "en") == quality_form()


def test_a_refusal_for_want_of_a_role_in_korean_and_chinese(people, chinese_campaign):
    """"Only these roles may ...": the same code, the roles and the act in the person's language."""
    client = api(people["qc"])
    english = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/", HTTP_ACCEPT_LANGUAGE="en")
    korean = client.post(f"/api/v1/campaigns/{chinese_campaign.pk}/next/", HTTP_ACCEPT_LANGUAGE="ko")
    assert english.status_code == korean.status_code == 403
    assert english.json()["code"] == korean.json()["code"] == "forbidden"
    assert english.json()["detail"] == "Only an annotator of this campaign may take items."
    assert korean.json()["detail"] == "이 캠페인의 레이블러만 항목을 받을 수 있습니다."
    from django.utils import translation

    from annotation import policy
    with translation.override("zh-hans"):
        assert policy.refusal({"expert", "manager"}, "hand in a batch") == "只有此项目的专家或管理员可以提交批次。"


def test_every_act_a_refusal_names_is_in_the_catalogs():
    """The acts the actions and pages pass to a refusal (require_role, forbidden, campaign_with_role) are the
    listed ones, so that each has its translation."""
    import re
    from pathlib import Path

    from django.conf import settings as conf
    from django.utils import translation

    from annotation import policy
    root = Path(conf.BASE_DIR)
    call = re.compile(r"(?:require_role|forbidden|campaign_with_role)\((?:[^()\"]|\([^()]*\))*?\"([^\"]+)\"\)")
    acts = {match for folder in ("annotation", "frontend") for path in (root / folder).rglob("*.py")
            for match in call.findall(path.read_text(encoding="utf-8"))}
    assert {"take items", "hand in a batch", "label its items", "manage it"} <= acts
    assert acts <= set(policy.REFUSED_ACTS), acts - set(policy.REFUSED_ACTS)
    for language in ("zh-hans", "ko"):
        with translation.override(language):
            assert all(translation.gettext(act) != act for act in policy.REFUSED_ACTS)
            assert all(translation.gettext(name) != name for name in policy.ROLE_NAMES.values())
