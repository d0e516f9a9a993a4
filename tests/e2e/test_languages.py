"""The annotators' own language: a Korean rater whose account says Korean labels a KoDialogBench-style batch with
the keyboard, and every string the page itself shows (not the items' text) is the Korean catalog's, read from the
page and matched against the compiled catalogs, never by eye. Screenshots of the page in Korean and in Chinese."""
import gettext
import re
from pathlib import Path

import pytest
from django.conf import settings

from annotation import actions
from annotation.models import Annotation
from frontend.models import Preferences
from tests.annotation.conftest import make_campaign

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOCALE = Path(settings.LOCALE_PATHS[0])
# KoDialogBench's dialog-act set (appendix B.2) and a response-selection item, as released.
ITEMS = [
    ("kodialogbench_dc_dialog_act_k-tdd.jsonl", {
        "dialogue": [[2, "잠깐 일시적으로 추워진 거래 키키"], [1, "아 진짜? 다행이다"],
                     [1, "한파라고 해서 진짜 오잉 했잖아!"], [2, "나도 한파 주의보 문자 와서 당황함"]],
        "question": "보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?",
        "options": ["지시", "단언", "언약", "표현"], "answer_idx": 3}),
    ("kodialogbench_dc_dialog_act_k-tdd.jsonl", {
        "dialogue": [[1, "내일 같이 도서관 갈래?"], [2, "좋아, 열 시에 만나자."]],
        "question": "보기 중 대화의 마지막 발화의 의도로 가장 알맞은 것은?",
        "options": ["지시", "단언", "언약", "표현"], "answer_idx": 2}),
]
# Not words: key names on chips and in hints, numbers, separators.
NOT_WORDS = re.compile(r"^[\W\d_]*(Tab|Enter|Esc|Space)?[\W\d_]*$|^[A-Z]$")


# Where a text built of several catalog texts (a report table's note) is cut into the sentences that are checked one
# by one.
SENTENCES = re.compile(r"(?<=[.。])\s+")


def catalog_patterns(language, sentences=False):
    """Every text the Korean (or Chinese) pages may show: each msgstr of the compiled catalogs (Django's and the
    scripts'), with its placeholders as wildcards and its markup as separate texts; with `sentences`, each sentence
    apart (SENTENCES)."""
    patterns = []
    for domain in ("django", "djangojs"):
        with open(LOCALE / language / "LC_MESSAGES" / f"{domain}.mo", "rb") as mo:
            catalog = gettext.GNUTranslations(mo)._catalog
        for key, text in catalog.items():
            if not key or not text:
                continue
            parts = re.split(r"<[^>]+>[^<]*</[^>]+>|<[^>]+>", text)
            for part in [s for p in parts for s in SENTENCES.split(p)] if sentences else parts:
                part = part.strip().rstrip(".。") if sentences else part.strip()
                # A text of placeholders and punctuation alone ("%(refused)s%(paused)s") would match any text.
                if re.search(r"[^\W\d_]", re.sub(r"%\(\w+\)s", "", part)):
                    # A placeholder is any text; "%%" is the "%" the page shows.
                    pieces = re.split(r"\s+", re.sub(r"%\(\w+\)s", " \0 ", part).replace("%%", "%").strip())
                    patterns.append(re.compile(r"\s*".join(".+?" if piece == "\0" else re.escape(piece)
                                                           for piece in pieces)))
    return patterns


# The report tables whose own words (titles, headers, notes, row labels, the reasons for missing figures) are in the
# reader's language: those of a report with model runs, a judge, human-anchored rows, the sequential gap and judge
# cards (tests.reports.test_human_anchored.mc_study).
REPORT_TABLES = ("dialogbench", "mc_models", "by_dimension", "by_domain", "crowd", "competence",
                 "human_anchored_humans", "human_anchored_models", "human_anchored_gaps", "alt_test", "sequential",
                 "judge_cards", "judge_savings")
# What those tables show that is no text of ours: the data's names (tasks, campaigns, annotators, runs, systems,
# domains, the form's question keys, items and their answers) and the identifiers the studies name figures by (the
# answer rules, the aggregation rules, the annotators' kind, the metrics' names), as the fixtures of these tests have
# them (tests.reports.test_human_anchored.mc_study, tests.reports.factories.every_section).
REPORT_DATA = re.compile(r"t1|arena|quality|c|ann|bob|cid|judge|m|judge-\d|rater|ernie-law|x|y|z|health|law"
                         r"|answer|verdict|score|x\d+|\w+: [A-D](, \w+: [A-D])*|[A-D]: \d+(, [A-D]: \d+)*"
                         r"|[\w-]+: \w+ / \w+|(judge|m) \[generation\]|acc|acc_norm|generation|majority|dawid_skene"
                         r"|skilled|Acc|UAR|Kappa|Spearman|Pearson|F1|Elo|Bradley-Terry|Fleiss' kappa"
                         r"|Krippendorff's alpha|pass@N")


def report_leftovers(texts, language):
    """The sentences of `texts` (a report table's words) that no catalog text of `language` matches."""
    patterns = catalog_patterns(language, sentences=True)
    left = []
    for text in texts:
        for part in SENTENCES.split(text.strip()):
            part = part.strip().rstrip(".。")
            if part and not NOT_WORDS.match(part) and not REPORT_DATA.fullmatch(part) \
                    and not any(p.fullmatch(part) for p in patterns):
                left.append(part)
    return list(dict.fromkeys(left))


# Runs in the page: the visible text nodes of the page's own interface, outside the item's content (the dialogue,
# the fields' values, the task's name and instructions, the question labels and option names) and the account's name.
PAGE_TEXTS = """() => {
  const data = "#dialogue, #fields, #task-name, #instructions, .brand, .signout > span, #language-select, " +
    "label.choice, #guidelines-text";
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    const text = node.textContent.trim();
    if (!text || parent.closest("script, style, [hidden], dialog:not([open])")) continue;
    if (parent.closest(data) && !parent.matches("#fields h3")) continue;  // a field's name is the page's own
    if (!parent.checkVisibility()) continue;
    if (parent.tagName === "LEGEND" && parent.closest("#answer-form")) continue;  // "1. " + the question's label
    texts.push(text);
  }
  return texts;
}"""


def untranslated(page, patterns):
    """The page's own texts that are no text of the catalog (each part between the page's · separators, each
    sentence apart: `patterns` from catalog_patterns(..., sentences=True))."""
    left = []
    for text in page.evaluate(PAGE_TEXTS):
        for part in [s for p in re.split(r"\s+·\s+|^·\s*|\s*·$", text) for s in SENTENCES.split(p)]:
            part = part.strip().rstrip(".。")
            if part and not NOT_WORDS.match(part) and not any(p.fullmatch(part) for p in patterns):
                left.append(part)
    return left


@pytest.fixture
def korean_batch(tmp_path):
    import json

    from benchmarks.actions import import_items

    path = tmp_path / ITEMS[0][0]
    path.write_text("\n".join(json.dumps(record, ensure_ascii=False) for _, record in ITEMS), encoding="utf-8")
    import_items(path, "kodialogbench", "kdb")
    boss, rater = make_user("boss"), make_user("rater1")
    campaign = make_campaign(boss, {"rater1": rater}, "kdb", roles={"rater1": "annotator"}, overlap=1, batch_size=10,
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    return campaign, rater


def label_with_keys(page, options):
    """Answers the item on screen with the key on the chip of `options`' intended option, then Enter."""
    before = page.text_content("#item-id")
    text = page.text_content("#dialogue")
    meant = next(record for _, record in ITEMS if record["dialogue"][0][1] in text)
    chip = page.locator("label.choice", has_text=options[meant["answer_idx"]]).locator("kbd").text_content()
    page.keyboard.press(chip.lower())
    page.keyboard.press("Enter")
    return before, "ABCD"[meant["answer_idx"]]


def test_a_korean_rater_labels_a_kodialogbench_batch_in_korean(page, korean_batch):
    campaign, rater = korean_batch
    Preferences.objects.create(user=rater, language="ko")
    patterns = catalog_patterns("ko", sentences=True)
    sign_in(page, "rater1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    assert page.get_attribute("html", "lang") == "ko"
    assert page.title().startswith("레이블링 · ")
    expect(page.locator("#countdown")).to_have_text("최소 읽기 시간이 지났습니다")
    assert untranslated(page, patterns) == []
    page.keyboard.press("g")
    expect(page.locator("#guidelines")).to_be_visible()
    assert untranslated(page, patterns) == []
    page.keyboard.press("Escape")
    options = ITEMS[0][1]["options"]
    meant = []
    before, answer = label_with_keys(page, options)
    meant.append(answer)
    expect(page.locator("#item-id")).not_to_have_text(before)
    expect(page.locator("#notice")).to_have_text("저장되었습니다.")
    assert untranslated(page, patterns) == []
    _, answer = label_with_keys(page, options)
    meant.append(answer)
    page.wait_for_selector("#done:not([hidden])")
    assert untranslated(page, patterns) == []
    assert page.text_content("#done-text").startswith("이 캠페인에는 기다리는 항목이 없습니다.")
    stored = list(Annotation.objects.order_by("id").values_list("answers__answer", flat=True))
    assert sorted(stored) == sorted(meant) and len(stored) == 2


@pytest.mark.parametrize(("language", "catalog", "title"), [("ko", "ko", "레이블링"), ("zh-hans", "zh_Hans", "标注")])
def test_the_annotation_page_in_korean_and_chinese_at_both_widths(page, korean_batch, language, catalog, title):
    campaign, rater = korean_batch
    Preferences.objects.create(user=rater, language=language)
    sign_in(page, "rater1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    assert untranslated(page, catalog_patterns(catalog, sentences=True)) == []
    shot(page, f"annotate-{language}", title, "#answer-form label.choice")


def open_guidelines(page, username, campaign):
    """Signs `username` in, opens their workspace on `campaign` and its guidelines with the G key."""
    sign_in(page, username)
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    page.keyboard.press("g")


def test_guidelines_written_per_language_in_the_browser_and_read_in_korean(page, second_page, korean_batch):
    """The manager writes Korean guidelines next to the default ones on the settings page; the Korean rater's
    guidelines (the ? or G key) are the Korean text, an English rater's the default."""
    campaign, rater = korean_batch
    sign_in(page, "boss")
    page.goto(f"/manage/campaigns/{campaign.pk}/settings/")
    expect(page.locator("label[for='id_guidelines_ko']")).to_have_text("Guidelines in Korean (한국어):")
    page.fill("#id_guidelines", "# Guidelines\n\nChoose the intent of the last utterance.")
    page.fill("#id_guidelines_ko", "# 지침\n\n대화의 마지막 발화의 의도를 고르세요.")
    page.fill("#id_note", "Korean guidelines")
    page.click("#save-settings")
    expect(page.locator(".messages")).to_contain_text("Settings saved as version 1")
    expect(page.locator("#id_guidelines_ko")).to_have_value("# 지침\n\n대화의 마지막 발화의 의도를 고르세요.")
    shot(page, "settings-guidelines-by-language", "Settings", "#id_guidelines_ko")
    stored = campaign.settings_versions.get().guidelines_by_language  # as the browser sent it: CR LF line ends
    assert {code: text.replace("\r\n", "\n") for code, text in stored.items()} == {
        "ko": "# 지침\n\n대화의 마지막 발화의 의도를 고르세요."}

    Preferences.objects.create(user=rater, language="ko")
    open_guidelines(second_page, "rater1", campaign)
    expect(second_page.locator("#guidelines-text h1")).to_have_text("지침")
    expect(second_page.locator("#guidelines-text")).to_contain_text("대화의 마지막 발화의 의도를 고르세요.")
    shot(second_page, "annotate-guidelines-ko", "레이블링", "#guidelines-text h1")

    english = make_user("rater2")
    actions.add_member(campaign, actor=campaign.created_by, user=english, role="annotator")
    Preferences.objects.create(user=english, language="en")
    open_guidelines(page, "rater2", campaign)
    expect(page.locator("#guidelines-text h1")).to_have_text("Guidelines")


def test_a_diqad_annotator_reads_the_form_in_chinese(page, tmp_path):
    """DiQAD's built-in form names its questions and options in Chinese: a Chinese annotator reads them so, and
    pressing the score's key stores the score's value, not its name."""
    from benchmarks.actions import import_items
    from tests.frontend.conftest import diqad_item, write_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in (1, 2)]), "diqad", "dq")
    boss, ann = make_user("boss"), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, "dq", roles={"ann1": "annotator"}, overlap=1, batch_size=10,
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    Preferences.objects.create(user=ann, language="zh-hans")
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    form = page.locator("#answer-form")
    expect(form.locator("legend", has_text="质量")).to_be_visible()
    expect(form.locator("label.choice", has_text="2：满足所有维度")).to_be_visible()
    expect(form.locator("legend", has_text="回答是否需要借助外部知识核实？")).to_be_visible()
    assert "meets all dimensions" not in form.text_content()
    assert untranslated(page, catalog_patterns("zh_Hans", sentences=True)) == []
    page.keyboard.press("1")
    expect(form.locator("legend", has_text="为什么是 1？")).to_be_visible()
    shot(page, "annotate-diqad-zh-hans", "标注", "#answer-form label.choice")
