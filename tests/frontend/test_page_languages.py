"""The pages of every labelling role, and the report, in the person's language (issue 39, item 3 and its smaller
defects): the QC page's estimates cards, the experts' forms, the batch history's events, states and the platform's
own reasons, roles and protocols by name, the report page and the report document with its tables; a manager's own
pages follow the manager's language; the scripts' catalog loads while a password must be changed."""
import html
import json
import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation import actions
from annotation.models import Batch, Membership
from frontend.models import Preferences
from reports.build import build_report
from reports.models import ReportText, StoredReport
from reports.render import render
from reports.render.tables import annotator_table
from reports.store import compute
from tests.annotation.conftest import make_campaign
from tests.e2e.test_languages import REPORT_TABLES, report_leftovers
from tests.reports.test_human_anchored import OPTIONS, mc_study
from tests.reports.test_stored import demo_benchmark

from .test_annotator_estimates import labelled_campaign

pytestmark = pytest.mark.django_db


def in_language(user, language):
    Preferences.objects.update_or_create(user=user, defaults={"language": language})
    client = Client()
    client.force_login(user)
    return client


def test_the_qc_page_estimates_in_korean(staff, people, diqad):
    campaign, _ = labelled_campaign(staff, people, diqad)
    batch = Batch.objects.get(campaign=campaign)
    actions.hand_in_batch(batch, actor=staff)
    page = in_language(people["qc"], "ko").get(f"/batches/{batch.pk}/review/").content.decode()
    assert "레이블러: 추정 역량과 정답 정확도" in page
    assert "Dawid-Skene: 레이블러마다 혼동 행렬" in page  # the annotator model's meaning, from metrics, translated
    assert "<th scope=\"col\">정답 정확도</th>" in page
    assert "<th scope=\"col\">역량(Dawid-Skene)</th>" in page and "dawid_skene" not in page  # the model by its name
    for english in ("estimated competence", "Competence:", "Gold accuracy", "labels per item", "Annotator<"):
        assert english not in page, english


def test_the_experts_uncertain_items_and_forms_in_chinese(staff, people, diqad):
    campaign, _ = labelled_campaign(staff, people, diqad)
    page = in_language(people["expert"], "zh-hans").get(
        f"/campaigns/{campaign.pk}/disagreements/?order=uncertain").content.decode()
    assert "最不确定的条目优先" in page and "<th scope=\"col\">不确定度</th>" in page
    assert "Most uncertain" not in page and "Posterior" not in page
    # The forms the page names questions and options by: the person's language ("Why 0?" is "为什么是 0？").
    forms = json.loads(re.search(r'<script id="task-forms" type="application/json">(.*?)</script>', page, re.S)
                       .group(1))
    questions = {q["key"]: q for form in forms.values() for q in form["questions"]}
    assert questions["reasons_0"]["label"] == "为什么是 0？"
    assert {o["value"]: o["label"] for o in questions["reasons_1"]["options"]}["less_informative"] == "信息量不足"


def test_the_batch_history_in_the_readers_language(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=1, batch_size=20, qc_sample_size=1, auto_hand_in=True)
    actions.cut_batches(campaign, actor=staff)
    batch = Batch.objects.get(campaign=campaign)
    from tests.annotation.conftest import submit_score

    while (offer := actions.lease_next_item(campaign, annotator=people["ann1"])) is not None and offer.assignment:
        submit_score(offer.assignment, people["ann1"], 2)
    client = in_language(people["qc"], "zh-hans")
    client.get("/")  # the page keeps the person's language in the session for the page's API calls
    events = client.get(f"/api/v1/batches/{batch.pk}/events/?limit=50").json()["results"]
    shown = {(e["kind"], e["kind_text"], e["to_state_text"], e["reason_text"]) for e in events}
    assert ("batch_started", "批次已开始", "标注中", "首次领取") in shown
    assert ("handed_in", "已提交", "已提交", "自动提交：每个条目都已有最终标签") in shown
    assert {e["reason"] for e in events} >= {"first lease", "handed in by itself: every item has its final label"}
    assert client.get(f"/api/v1/batches/{batch.pk}/").json()["state_text"] == "已提交"
    # A person's own reason is shown as written.
    actions.start_review(batch, actor=people["qc"])
    home = client.get("/").content.decode()
    assert "带质检的生产标注（DiQAD）" in home and "质检员" in home and "审核中" in home


def test_a_managers_pages_follow_the_managers_language_not_the_campaigns(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, language="zh-hans")
    assert Membership.objects.filter(campaign=campaign, user=people["manager"], role="manager").exists()
    manager = Client()
    manager.force_login(people["manager"])
    for url in ("/", "/manage/", f"/manage/campaigns/{campaign.pk}/"):
        page = manager.get(url).content.decode()
        assert '<html lang="en">' in page and "我的工作" not in page, url
    annotator = Client()
    annotator.force_login(people["ann1"])
    assert '<html lang="zh-hans">' in annotator.get("/").content.decode()  # the campaign's language still
    chosen = in_language(people["manager"], "ko")
    assert '<html lang="ko">' in chosen.get("/manage/").content.decode()


def test_the_scripts_catalog_loads_while_the_password_must_be_changed(staff, people, diqad):
    from frontend.passwords import MUST_CHANGE

    client = Client()
    client.force_login(people["ann1"])
    session = client.session
    session[MUST_CHANGE] = True
    session.save()
    assert client.get("/").status_code == 302
    page = client.get("/accounts/password/").content.decode()
    catalog = re.search(r'<script src="(/jsi18n/[^"]*)"', page).group(1)
    answer = client.get(catalog)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/javascript")
    assert client.post("/i18n/setlang/", {"language": "ko", "next": "/accounts/password/"}).status_code == 302
    assert '<html lang="ko">' in client.get("/accounts/password/").content.decode()


@pytest.fixture
def report_reader(settings):
    settings.REPORTS_COMPUTE_IN_REQUEST = False
    _, campaign = demo_benchmark("db")
    reader = User.objects.create_user("reader", is_staff=True)
    return reader, campaign


def test_the_report_page_and_document_in_chinese_one_rendering_per_language(report_reader):
    reader, campaign = report_reader
    chinese = in_language(reader, "zh-hans")
    page = chinese.get(f"/reports/db/?campaign={campaign.pk}").content.decode()
    assert "差距中模型准确率的计分规则" in page and "报告就绪后即可下载。" in page and "应用" in page
    assert "Rule for the models" not in page and "Download:" not in page
    compute(StoredReport.objects.get().pk)
    document = chinese.get(f"/reports/db/embed/?campaign={campaign.pk}").content.decode()
    assert '<html lang="zh-hans">' in document and "<h2>如何阅读本报告</h2>" in document
    assert "<th>人类（多数）</th>" in document and "<dt>金标准</dt>" in document
    # The reading guide too (generated again in the reader's language from the stored figures).
    assert "每个区间都是 95% 百分位 bootstrap，重抽样" in document and "Every interval is" not in document
    assert "How to read this report" not in document and "<th>Human (majority)</th>" not in document
    # The campaign by its name, not its id.
    assert f"<dt>标注项目</dt><dd>{campaign.name}</dd>" in document
    latex = chinese.get(f"/reports/db/download/latex/?campaign={campaign.pk}").content.decode()
    assert r"\caption{双方都作答的条目上人类多数减去模型" in latex and "任务 & 模型" in latex
    english = Client()
    english.force_login(User.objects.create_user("english-reader", is_staff=True))
    embed = english.get(f"/reports/db/embed/?campaign={campaign.pk}").content.decode()
    assert "<h2>How to read this report</h2>" in embed
    kept = set(ReportText.objects.values_list("format", "language"))
    assert {("html", "zh-hans"), ("html", "en"), ("latex", "zh-hans")} <= kept
    csv = chinese.get(f"/reports/db/download/csv/?campaign={campaign.pk}")
    assert csv.status_code == 200 and ("csv", "") in set(ReportText.objects.values_list("format", "language"))


def test_the_annotators_table_names_campaigns():
    report = {"campaigns": [{"campaign_id": 7, "name": "DiQAD crowd, round A"}],
              "annotators": [{"campaign_id": 7, "annotator": "ann1", "n_annotations": 3}]}
    table = annotator_table(report)
    assert table.rows[0][0].text() == "DiQAD crowd, round A"


class TableWords(HTMLParser):
    """The words of a report document's tables named in `tables` (REPORT_TABLES): each caption, header, cell, missing
    figure's reason (the cell's title) and the table's note, without the notes' marks."""

    def __init__(self, tables=REPORT_TABLES):
        super().__init__()
        self.tables = tables
        self.texts, self.current, self.inside, self.after, self.mark = [], None, False, False, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.inside = attrs.get("id") in self.tables
        elif tag == "p" and self.after and attrs.get("class") == "note":
            self.current = []
        elif self.inside and tag in ("caption", "th", "td"):
            self.current = []
            if attrs.get("title"):
                self.texts.append(attrs["title"])
        elif tag in ("sup", "span"):
            self.mark = True
        elif tag != "p":
            return
        self.after = False

    def handle_endtag(self, tag):
        if tag in ("sup", "span"):
            self.mark = False
        elif tag in ("caption", "th", "td", "p") and self.current is not None:
            self.texts.append("".join(self.current))
            self.current = None
        elif tag == "table":
            self.after, self.inside = self.inside, False

    def handle_data(self, data):
        if self.current is not None and not self.mark:
            self.current.append(data)


def table_words(document, tables=REPORT_TABLES):
    parser = TableWords(tables)
    parser.feed(document)
    return parser.texts


@pytest.mark.parametrize(("language", "catalog", "expected"), [
    ("zh-hans", "zh_Hans", ["随机水平", "所有任务，合并条目（条目级；为主）", "在此运行", "本表的方法："]),
    ("ko", "ko", ["우연 수준", "모든 과제, 합친 항목(항목 수준; 우선)", "여기서 실행", "이 표의 방법:"]),
])
def test_the_reports_table_notes_row_labels_and_reasons_in_the_readers_language(language, catalog, expected):
    """A report with model runs, a judge, human-anchored rows, the gap while labels arrive and judge cards: every
    title, header, note, row label and reason of its tables is a text of the reader's catalog (issue 39, item 3)."""
    d, *_ = mc_study()
    report = build_report(d, OPTIONS)
    document = render(report, "html", language)
    words = table_words(document)
    assert len(words) > 300 and all(text in document for text in expected)
    assert report_leftovers(words, catalog) == []
    latex = render(report, "latex", language)
    assert expected[0] in latex and expected[2] in latex and "Chance" not in latex and "run here" not in latex
    english = render(report, "html")
    assert "Chance" in english and "all tasks, pooled items (item-level; leads)" in english


# What the sections and the renderings compose in English, that a reader of Chinese or Korean must not meet.
ENGLISH = ("small sample:", "is undefined on", "The judge ", "accuracy of ", "share of items", "no more accurate",
           "matches applied", "Matches:", "the read answers", "pass@N: share", "rating positions",
           "Spearman and Pearson:", "words: each", "one label per pair", "cross-domain", "w/o ", "forced,", "shuffled",
           "Intervals at", "gold forced", "loop detector", "position of the correct", "paired-bootstrap",
           "human labels used", "A confidence sequence", "A typical person", "A human-anchored row")
# The tables of a report with every section (tests.reports.factories.every_section), the papers' tables aside: they
# lay the studies' own rows, titles and column names beside ours.
EVERY_SECTION = {"dialogbench", "mc_models", "positions", "correlations", "diqad_quality_score",
                 "diqad_quality_score_domains", "pairwise_arena", "botchat_arena", "botchat_versus_arena",
                 "judge_agreement_arena", "utterance_length", "agreement_campaigns", "agreement_batches", "annotators",
                 "crowd", "competence", "human_anchored_humans", "alt_test", "sequential", "judge_cards",
                 "judge_savings"}


def plot_words(document):
    """Each plot's caption and the texts drawn in it (titles, axes, ticks, legends)."""
    svgs = re.findall(r"<svg.*?</svg>", document, re.S)
    return [html.unescape(t) for svg in svgs for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)] + [
        html.unescape(t) for t in re.findall(r"<figcaption>(.*?)</figcaption>", document)]


def guide_words(document):
    guide = re.search(r'<section class="how-to-read".*?</section>', document, re.S).group()
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<d[dt]>(.*?)</d[dt]>", guide, re.S)]


@pytest.mark.parametrize(("language", "catalog"), [("zh-hans", "zh_Hans"), ("ko", "ko")])
def test_a_report_with_every_section_leaves_no_english_sentence(language, catalog):
    """Pairwise, BotChat, self-chat, DiQAD, correlations, positions, agreement, judge cards: every table's words, the
    reading guide and the plots are the reader's catalog's or the data's (issue 39); the stored report keeps English."""
    from tests.reports.factories import every_section

    report = build_report(every_section(), OPTIONS)
    document = render(report, "html", language)
    tables = set(re.findall(r'<table id="([^"]+)"', document))
    assert tables >= EVERY_SECTION
    ours = tables - {t for t in tables if t.startswith("paper_")}
    assert report_leftovers(table_words(document, ours), catalog) == []
    assert report_leftovers(plot_words(document), catalog) == []
    # The reading guide names the answer rules by their identifiers beside their meanings; a sentence of it is the
    # catalog's, or in the reader's script.
    script = re.compile(r"[\u4e00-\u9fff]" if language == "zh-hans" else r"[\uac00-\ud7af]")
    assert [s for s in report_leftovers(guide_words(document), catalog) if not script.search(s)] == []
    # The provenance (last) lists each study preset's differences from its paper, as the study's recipe words them.
    without_papers = re.sub(r'<table id="paper_.*?</table>\s*<p class="note">.*?</p>', "", document[
        :document.rindex("<h2>")], flags=re.S)
    assert [english for english in ENGLISH if english in without_papers] == []
    latex = render(report, "latex", language)
    ours = "".join(t for t in latex.split("\\begin{table}")[1:] if "\\label{tab:paper-" not in t)
    assert [english for english in ENGLISH if english in ours] == []
    # Stored, and in JSON and CSV, the texts stay English.
    stored = render(report, "json")
    assert "small sample: " in stored and "The judge " in stored and "accuracy of judge" in stored
