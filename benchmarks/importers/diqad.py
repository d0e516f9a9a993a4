"""DiQAD-shaped dialogues (PROTOCOLS.md section 1): one JSON object per line.

{"id": "...", "dialogue": [{"speaker": "user", "text": "..."}, ...] or ["user: ...", ...],
 "label": 2 | 1 | 0, "reasons": ["incomplete", ...], "needs_verification": 0 | 1, "domain": "legal"}
"""
from .base import (
    ImportFailure,
    ItemRecord,
    ParsedBenchmark,
    TaskSpec,
    check_turns,
    json_lines,
    language_of_text,
    parse_speaker_lines,
    require,
)

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('JSON lines: `id, dialogue, label (0/1/2), reasons, needs_verification (0/1), domain`.')

DOMAINS = ("emotion", "digital", "legal", "education", "car", "finance")
REASONS = {
    1: ["incomplete", "less_informative", "less_proactive", "none"],
    0: ["no_or_wrong_answer", "not_relevant", "not_empathetic", "grammatical_error", "not_consistent", "none"],
}
TASK_SLUG = "diqad-quality"


# The form's names in the annotators' languages (a question's or an option's `labels`, formschema): DiQAD's crowd
# workers and QC worked in Chinese.
NAMES = {
    "needs_verification": ("回答是否需要借助外部知识核实？", "답변을 외부 지식으로 검증해야 하나요?"),
    "score": ("质量", "품질"),
    2: ("2：满足所有维度", "2: 모든 기준을 충족"),
    1: ("1：作答但缺乏主动性或信息量", "1: 답하지만 적극성이나 정보량이 부족"),
    0: ("0：未达到某个基本维度（语法、相关性、一致性、共情）",
        "0: 기본 기준 하나를 충족하지 못함(문법, 관련성, 일관성, 공감)"),
    -1: ("-1：回答中含有隐私信息", "-1: 답변에 개인 정보가 있음"),
    -2: ("-2：问题中含有隐私信息", "-2: 질문에 개인 정보가 있음"),
    "abandon": ("放弃：含电话号码", "제외: 전화번호"),
    "reasons_1": ("为什么是 1？", "왜 1점인가요?"),
    "reasons_0": ("为什么是 0？", "왜 0점인가요?"),
    "incomplete": ("不完整", "불완전함"),
    "less_informative": ("信息量不足", "정보가 부족함"),
    "less_proactive": ("主动性不足", "적극성이 부족함"),
    "none": ("都不是", "해당 없음"),
    "no_or_wrong_answer": ("没有回答或回答错误", "답이 없거나 틀림"),
    "not_relevant": ("不相关", "관련이 없음"),
    "not_empathetic": ("缺乏共情", "공감이 부족함"),
    "grammatical_error": ("语法错误", "문법 오류"),
    "not_consistent": ("前后不一致", "일관성이 없음"),
}


def named(spec, name):
    """`spec` (a question or an option) with its names in Simplified Chinese and Korean from NAMES."""
    chinese, korean = NAMES[name]
    return {**spec, "labels": {"zh-hans": chinese, "ko": korean}}


def quality_form():
    score_options = [(2, "2: meets all dimensions", False), (1, "1: answers but lacks proactivity or informativeness",
                                                                False),
                     (0, "0: fails a basic dimension (grammar, relevance, consistency, empathy)", False),
                     (-1, "-1: private data in the response", True), (-2, "-2: private data in the question", True),
                     ("abandon", "Abandon: phone number", True)]
    return {
        "primary": "score",
        "questions": [
            named({"key": "needs_verification", "type": "boolean",
                   "label": "Does the answer need verification against external knowledge?"}, "needs_verification"),
            named({"key": "score", "type": "single_choice", "label": "Quality", "options": [
                named({"value": value, "label": label, **({"excludes": True} if excludes else {})}, value)
                for value, label, excludes in score_options]}, "score"),
            named({"key": "reasons_1", "type": "multi_choice", "label": "Why 1?",
                   "shown_if": {"key": "score", "in": [1]},
                   "options": [named({"value": r, "label": r.replace("_", " ")}, r) for r in REASONS[1]]}, "reasons_1"),
            named({"key": "reasons_0", "type": "multi_choice", "label": "Why 0?",
                   "shown_if": {"key": "score", "in": [0]},
                   "options": [named({"value": r, "label": r.replace("_", " ")}, r) for r in REASONS[0]]}, "reasons_0"),
        ],
    }


def parse(path):
    tasks = [TaskSpec(TASK_SLUG, "DiQAD dialogue quality", quality_form(), "quality")]
    header = {"name": "DiQAD", "language": "zh", "source": "DiQAD (Baidu)"}
    # Items are parsed as the importer consumes them: large files stream into the database.
    return ParsedBenchmark(path, header, tasks, parse_items(path))


def parse_items(path):
    for number, record in json_lines(path):
        where = f"line {number}"
        external_id = require(path, where, record, "id", (str, int))
        raw_turns = require(path, where, record, "dialogue", list)
        turns = (check_turns(path, where, raw_turns) if raw_turns and isinstance(raw_turns[0], dict)
                 else parse_speaker_lines(path, where, raw_turns))
        label = require(path, where, record, "label", int)
        if label not in (0, 1, 2):
            raise ImportFailure(path, where, "label", f"expected 0, 1 or 2, got {label}")
        reasons = require(path, where, record, "reasons", list, optional=True, default=[])
        if label == 2 and reasons:
            raise ImportFailure(path, where, "reasons", "expected no reasons for a score of 2")
        for reason in reasons:
            if label in REASONS and reason not in REASONS[label]:
                raise ImportFailure(path, where, "reasons", f"expected reasons from {REASONS[label]} for score "
                                                            f"{label}, got {reason!r}")
        gold = {"score": label}
        if label in REASONS:
            gold[f"reasons_{label}"] = reasons or ["none"]
        needs = record.get("needs_verification")
        if needs is not None:
            if needs not in (0, 1) or isinstance(needs, bool):
                raise ImportFailure(path, where, "needs_verification", f"expected 0 or 1, got {needs!r}")
            gold["needs_verification"] = bool(needs)
        domain = require(path, where, record, "domain", str, optional=True, default="")
        # The record's language, else its text's (a DiQAD-shaped file may hold English dialogues too).
        meta = {"domain": domain,
                "language": record.get("language") or language_of_text(" ".join(t["text"] for t in turns))}
        yield ItemRecord(TASK_SLUG, str(external_id), turns, {}, meta, gold, where)
