"""The QC page, the experts' disagreements page and the report page in the person's language, read from the rendered
pages in the browser: every text the page itself shows (not the items' content, people's names, dates or the
options' names, which the task's form names per language) is a text of the compiled catalogs. Screenshots of the
disagreements and report pages in Chinese, the QC page in Korean, the report at 800 px; the report's tables (notes, row
labels, reasons) in Chinese and in Korean."""
import re

import pytest

from annotation import actions
from annotation.models import Batch
from frontend.models import Preferences
from reports.models import StoredReport
from reports.store import compute
from tests.annotation.conftest import make_campaign, submit_score
from tests.reports.test_stored import demo_benchmark

from .conftest import PASSWORD, expect, make_user, shot, sign_in
from .test_languages import NOT_WORDS, REPORT_TABLES, catalog_patterns, report_leftovers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs in the page: the visible text nodes (and the title, aria-label and placeholder texts) of the page's own
# interface, outside the elements `data` names.
PAGE_TEXTS = """(data) => {
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    const text = node.textContent.trim();
    if (!text || parent.closest("script, style, [hidden], dialog:not([open])")) continue;
    if (parent.closest(data) || !parent.checkVisibility()) continue;
    texts.push(text);
  }
  return texts;
}"""
# Runs in the report's frame: the texts of the header cells set on more than one line.
WRAPPED_HEADERS = """() => [...document.querySelectorAll("th")].filter((th) => {
  const style = getComputedStyle(th);
  const content = th.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  return th.getClientRects().length && content > 1.5 * parseFloat(style.lineHeight);
}).map((th) => th.textContent)"""
# Everywhere: the site's name, the account's name, the languages by their own names.
COMMON = ".brand, .signout > span, #language-select"


def untranslated(page, patterns, data):
    left = []
    for text in page.evaluate(PAGE_TEXTS, f"{COMMON}, {data}"):
        for part in re.split(r"\s+·\s+|^·\s*|\s*·$", text):
            part = part.strip()
            if part and not NOT_WORDS.match(part) and not any(p.fullmatch(part) for p in patterns):
                left.append(part)
    return left


@pytest.fixture
def labelled(tmp_path):
    """A DiQAD production campaign whose two annotators differ on every item (a 0 with its reason against a 1 with
    its reason): one batch, labelled, with an open disagreement per item."""
    from benchmarks.actions import import_items
    from tests.frontend.conftest import diqad_item, write_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n, label=0) for n in (1, 2, 3)]), "diqad", "dq")
    boss = make_user("boss")
    people = {name: make_user(name) for name in ("ann1", "ann2", "qc", "expert")}
    campaign = make_campaign(boss, people, "dq", roles={"ann1": "annotator", "ann2": "annotator", "qc": "qc",
                                                        "expert": "expert"},
                             overlap=2, batch_size=10, qc_sample_size=3, min_reading_seconds=0, seed=1,
                             disagreement_policy="adjudicate")
    actions.cut_batches(campaign, actor=boss)
    for name, score in (("ann1", 0), ("ann2", 1)):
        while (offer := actions.lease_next_item(campaign, annotator=people[name])) is not None and offer.assignment:
            submit_score(offer.assignment, people[name], score)
    return campaign, people, boss


def test_the_disagreements_page_in_chinese(page, labelled):
    campaign, people, _ = labelled
    Preferences.objects.create(user=people["expert"], language="zh-hans")
    sign_in(page, "expert")
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    page.wait_for_selector("#disagreements .disagreement")
    answers = page.locator("#disagreements .disagreement").first.locator("ul.labels")
    expect(answers).to_contain_text("为什么是 0？: 不相关")
    expect(answers).to_contain_text("为什么是 1？: 不完整")
    assert "Why 0?" not in answers.text_content() and "not_relevant" not in answers.text_content()
    # Data: the item's content, the people's names, the options (named by the task's form in Chinese).
    data = ".item-content, .who, ul.labels strong, .answer-details, label.choice"
    left = untranslated(page, catalog_patterns("zh_Hans"), data)
    assert left == [], left
    shot(page, "disagreements-zh-hans", "分歧", "#disagreements .disagreement")


def test_the_qc_page_in_korean(page, labelled):
    campaign, people, boss = labelled
    batch = Batch.objects.get(campaign=campaign)
    for disagreement in campaign.disagreements.all():
        actions.resolve_disagreement(disagreement, actor=people["expert"], value=0, reason="")
    batch.refresh_from_db()
    if batch.state == "annotating":
        actions.hand_in_batch(batch, actor=boss)
    Preferences.objects.create(user=people["qc"], language="ko")
    sign_in(page, "qc")
    page.goto(f"/batches/{batch.pk}/review/")
    page.click("#start")
    page.wait_for_selector("#sample .sample-item")
    expect(page.locator("#history")).to_contain_text("검토 시작")
    expect(page.locator("#batch-state")).to_contain_text("상태: 검토 중")
    expect(page.locator("#annotator-estimates")).to_contain_text("레이블러: 추정 역량과 정답 정확도")
    # Data: the items, the options and final labels (the form's names), the people, the history's dates.
    data = (".item-content, label.choice, .final, #figures th[scope=row], #history td:nth-child(1), "
            "#history td:nth-child(5), #annotator-estimates th[scope=row]")
    assert untranslated(page, catalog_patterns("ko"), data) == []
    shot(page, "review-ko", "QC", "#annotator-estimates")


def open_report_page(page, settings, language):
    """A staff reader of `language` opens the report page of the DialogBench demo's campaign, computed as a worker
    would; the report's frame."""
    settings.REPORTS_COMPUTE_IN_REQUEST = False  # computed below, as a worker would
    _, campaign = demo_benchmark("db")
    reader = make_user("reader")
    reader.is_staff = True
    reader.set_password(PASSWORD)
    reader.save()
    Preferences.objects.create(user=reader, language=language)
    sign_in(page, "reader")
    page.goto(f"/reports/db/?campaign={campaign.pk}")  # queues the report
    compute(StoredReport.objects.get().pk)
    page.reload()
    expect(page.locator("#report-status")).to_be_hidden()
    return page.frame_locator("#report-frame")


def test_the_report_page_in_chinese_at_both_widths(page, settings):
    frame = open_report_page(page, settings, "zh-hans")
    expect(frame.locator("#how-to-read h2")).to_have_text("如何阅读本报告", timeout=30_000)
    expect(frame.locator("th", has_text="人类（多数）").first).to_be_visible()
    # Data: the formats' names on the download links.
    assert untranslated(page, catalog_patterns("zh_Hans"), "#downloads a") == []
    expect(page.locator("#download-latex")).to_have_text("LaTeX")
    shot(page, "report-zh-hans", "报告", "#report-frame")
    # Readable at 800 px: no header breaks over lines (the table scrolls sideways instead).
    page.set_viewport_size({"width": 800, "height": 900})
    document = page.frame(url=re.compile(r"/embed/"))
    expect(frame.locator("th").first).to_be_visible()
    assert document.evaluate(WRAPPED_HEADERS) == []


def test_the_report_page_in_korean(page, settings):
    """The same page for a reader of Korean: the page, the report's guide, headers and plots in Korean."""
    frame = open_report_page(page, settings, "ko")
    expect(frame.locator("#how-to-read h2")).to_have_text("이 보고서를 읽는 법", timeout=30_000)
    expect(frame.locator("th", has_text="사람(다수결)").first).to_be_visible()
    expect(frame.locator("figcaption", has_text="위치 편향")).to_be_visible()
    expect(frame.locator("figure svg text", has_text="정답의 위치")).to_be_attached()
    assert untranslated(page, catalog_patterns("ko"), "#downloads a") == []
    shot(page, "report-ko", "보고서", "#report-frame")


# Runs in the report document: the words of the tables named (captions, headers, cells without the notes' marks and
# the small-sample badge, the missing figures' reasons, each table's note).
TABLE_WORDS = """(ids) => ids.flatMap((id) => {
  const table = document.getElementById(id);
  if (!table) return [];
  const bare = (element) => {
    const copy = element.cloneNode(true);
    copy.querySelectorAll("sup, span").forEach((mark) => mark.remove());
    return copy.textContent;
  };
  const cells = [...table.querySelectorAll("caption, th, td")];
  const note = table.nextElementSibling;
  return [...cells.map(bare), ...cells.filter((c) => c.title).map((c) => c.title),
          ...(note && note.matches("p.note") ? [bare(note)] : [])];
})"""


@pytest.mark.parametrize(("language", "catalog", "title", "caption"), [
    ("zh-hans", "zh_Hans", "报告", "评判模型卡片"), ("ko", "ko", "보고서", "평가 모델 카드")])
def test_the_reports_tables_in_chinese_and_korean(page, language, catalog, title, caption):
    """A report with model runs, a judge, human-anchored rows, the gap while labels arrive and judge cards, as the
    reader's browser shows it: every title, header, note, row label and reason of its tables is the catalog's."""
    from reports.build import build_report
    from reports.render import render
    from tests.reports.test_human_anchored import OPTIONS, mc_study

    d, *_ = mc_study()
    page.set_content(render(build_report(d, OPTIONS), "html", language))
    expect(page.locator("#judge_cards caption")).to_contain_text(caption)
    words = page.evaluate(TABLE_WORDS, list(REPORT_TABLES))
    assert len(words) > 300
    assert report_leftovers(words, catalog) == []
    shot(page, f"report-tables-{language}", title, "#judge_cards")


# Runs in the report document: the texts drawn in its plots (titles, axes, legends) and their captions.
PLOT_WORDS = """() => [...document.querySelectorAll("figure svg text, figcaption")].map((t) => t.textContent.trim())
  .filter((t) => t)"""


@pytest.mark.parametrize(("language", "catalog", "title"), [("zh-hans", "zh_Hans", "报告"), ("ko", "ko", "보고서")])
def test_a_report_with_every_section_in_chinese_and_korean(page, language, catalog, title):
    """Pairwise, BotChat, self-chat, DiQAD, correlations, positions, agreement and judge cards, as the reader's browser
    shows them: every table's words (the papers' tables aside, which lay the studies' own rows beside ours) and every
    plot's title, axes and legend are the catalog's or the data's. Screenshots of the whole report."""
    from reports.build import build_report
    from reports.render import render
    from tests.reports.factories import every_section
    from tests.reports.test_human_anchored import OPTIONS

    page.set_content(render(build_report(every_section(), OPTIONS), "html", language))
    tables = [t for t in page.evaluate("() => [...document.querySelectorAll('table[id]')].map((t) => t.id)")
              if not t.startswith("paper_")]
    assert {"positions", "correlations", "diqad_quality_score_domains", "botchat_versus_arena", "utterance_length",
            "judge_cards"} <= set(tables)
    words = page.evaluate(TABLE_WORDS, tables)
    assert len(words) > 1000
    assert report_leftovers(words, catalog) == []
    plots = page.evaluate(PLOT_WORDS)
    assert len(plots) > 50 and report_leftovers(plots, catalog) == []
    shot(page, f"report-every-section-{language}", title, "figure svg")
