"""Texts a report composes in English from parts are shown in the reader's language: the template a stored text was
composed from is found again, its texts translated and its data (names, keys, numbers) kept."""
import re

import pytest
from django.utils import translation

from metrics import small_sample
from metrics.prediction_powered import Coverage, coverage_short
from reports import texts
from reports.texts import shown


def in_language(language, text):
    with translation.override(language):
        return shown(text)


def test_what_metrics_writes_is_read_back_from_its_parts():
    one = small_sample([(8, 30, "items")])
    two = small_sample([(8, 30, "items"), (2, 3, "raters per item")], "few people")
    assert texts.SMALL_SAMPLE.read(one) == {"counts": "8 items < 30"}
    assert texts.SMALL_SAMPLE_WHY.read(two) == {"counts": "8 items < 30, 2 raters per item < 3", "why": "few people"}
    assert texts.SMALL_SAMPLE_COUNT.read("2 raters per item < 3") == {"n": "2", "what": "raters per item",
                                                                    "minimum": "3"}
    short = coverage_short(Coverage(0.85, 0.9, 2000, None), 0.95)
    assert texts.COVERAGE_SHORT.read(short) == {"worst": "0.85", "level": "95%", "floor": "0.93"}


@pytest.mark.parametrize("template", texts.TEMPLATES, ids=lambda t: t.text[:40])
def test_every_template_reads_back_what_it_composed_and_has_both_translations(template):
    names = re.findall(r"%\((\w+)\)s", template.text)
    parts = {name: f"{name}-{n}" for n, name in enumerate(names)}
    if template.forms:  # parts read with a narrower expression: values of that form
        parts.update({name: {"counts": "8 items < 30", "date": "2026-12-07"}.get(name, "7") for name in template.forms})
        parts.update({name: "no label" for name in template.forms if name == "why"})
    assert template.read(template(**parts)) == parts
    for language in ("zh-hans", "ko"):
        with translation.override(language):
            translated = translation.gettext(template.text)
        assert translated != template.text, (language, template.text)
        assert sorted(re.findall(r"%\((\w+)\)s", translated)) == sorted(names)


@pytest.mark.parametrize(("language", "expected"), [
    ("zh-hans", "小样本：条目 8 < 30、每个条目的评分者 2 < 3"), ("ko", "소표본: 항목 8 < 30, 항목당 평가자 2 < 3")])
def test_a_small_sample_flag_in_the_readers_language(language, expected):
    flag = small_sample([(8, 30, "items"), (2, 3, "raters per item")])
    assert in_language(language, flag) == expected
    assert in_language("en", flag) == flag


def test_two_flags_of_a_row_each_in_the_readers_language():
    flag = ("small sample: 6 labelled items < 30; small sample: simulated coverage 0.85 of a 95% interval at this "
            "size, below 0.93")
    assert in_language("zh-hans", flag) == ("小样本：已标注条目 6 < 30；"
                                            "小样本：在此规模下，95% 区间的模拟覆盖率为 0.85，低于 0.93")


def test_a_figure_undefined_on_some_tasks_names_its_key_and_tasks_as_they_are():
    reason = texts.UNDEFINED_ON_TASKS(key="human_majority", tasks="emotion_detection, 意图识别")
    assert in_language("zh-hans", reason) == "human_majority 在任务 emotion_detection, 意图识别 上无定义"
    assert in_language("ko", reason) == "human_majority은(는) 과제 emotion_detection, 意图识别에서 정의되지 않습니다"


def test_the_judge_cards_verdict_and_estimand_in_the_readers_language():
    estimand = texts.ACCURACY_OF(model="qwen2.5-7b")
    verdict = texts.VERDICT_BUT(test="passes the alternative annotator test", kind="skilled", epsilon=0.15,
                                saved="40%", estimand=estimand, rho=0.52)
    assert in_language("zh-hans", verdict) == ("评判模型通过了替代标注员检验（skilled 标注员，epsilon 0.15），"
                                               "但在 PPI++ 下为qwen2.5-7b 的准确率节省 40% 的人工标签"
                                               "（试点：rho^2 = 0.52）。")
    assert in_language("ko", verdict) == ("평가 모델: 대체 레이블러 검정 통과(skilled 레이블러, epsilon 0.15). "
                                          "하지만 PPI++로 qwen2.5-7b의 정확도에서 사람 레이블의 40%을(를) 절감합니다"
                                          "(파일럿: rho^2 = 0.52).")
    undefined = texts.VERDICT_UNDEFINED(test="fails the alternative annotator test", why="no item is labelled")
    assert in_language("zh-hans", undefined) == "评判模型未通过替代标注员检验；此处其节省量无定义（没有已标注的条目）。"


def test_a_text_no_template_made_stays_as_it_is():
    assert in_language("zh-hans", "gpt-4o; llama") == "gpt-4o; llama"
    assert in_language("zh-hans", "") == "" and in_language("zh-hans", None) is None


@pytest.mark.parametrize(("why", "expected"), [
    (texts.GOLD_PINNED_BY_BECAUSE(campaign=2, version="db@gold-v1", user="boss", date="2026-12-07",
                                  reason="adjudicated: round 2"),
     "캠페인 2의 관리자가 고정함(db@gold-v1, boss, 2026-12-07): adjudicated: round 2"),
    (texts.GOLD_PINNED_BY(campaign=2, version="db@gold-v1", user="boss", date="2026-12-07"),
     "캠페인 2의 관리자가 고정함(db@gold-v1, boss, 2026-12-07)"),
    (texts.GOLD_NOT_CHOSEN(benchmark="db", source="the gold published with the data (items' source gold)"),
     "벤치마크 db에 선택된 정답이 없음: 데이터와 함께 공개된 정답(항목의 원본 정답)"),
])
def test_why_the_report_cites_its_gold_in_the_readers_language(why, expected):
    assert in_language("ko", why) == expected
