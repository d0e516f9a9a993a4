"""DialogBench items (PROTOCOLS.md section 2): one JSON object per line.

{"id": "...", "task": "emotion_detection", "domain": "...",
 "speaker1_personality": "...", "speaker2_personality": "...",   # or "personality": {...}
 "dialogue": ["speaker1: ...", "speaker2: ..."] or [{"speaker", "text"}],
 "question": "...",                                                 # optional
 "options": {"A": "...", "B": "...", ...}, "label": "B",
 optional extras: knowledge, commonsense, persona, premise, hypothesis, response, slot, test_question}
One task per DialogBench task; the label becomes the item's source gold.
"""
import re

from .base import (
    ImportFailure,
    ItemRecord,
    ParsedBenchmark,
    TaskSpec,
    check_turns,
    json_lines,
    parse_speaker_lines,
    require,
)

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('JSON lines: `id, task, domain, speaker1_personality, speaker2_personality, dialogue, question, '
         'options {A..D}, label` and extras (`knowledge, commonsense, persona, premise, hypothesis, response, '
         'slot, test_question`).')

TASKS = {
    # slug: (name, dimension); the dimensions are the paper's Table 2 (Ou et al., 2024).
    "knowledge_grounded_response_generation": ("Knowledge-grounded response generation", "correctness"),
    "intent_classification": ("Intent classification", "correctness"),
    "slot_filling": ("Slot filling", "correctness"),
    "emotion_detection": ("Emotion detection", "consistency"),
    "personality_grounded_response_generation": ("Personality-grounded response generation", "consistency"),
    "multi_turn_response_generation": ("Multi-turn response generation", "coherence"),
    "dialogue_summarization": ("Dialogue summarization", "consistency"),
    "commonsense_aware_response_generation": ("Commonsense-aware response generation", "correctness"),
    "dialogue_infilling": ("Dialogue infilling", "coherence"),
    "offensive_detection": ("Offensive detection", "safety"),
    "dialogue_nli": ("Dialogue natural language inference", "consistency"),
    "relation_classification": ("Relation classification", "consistency"),
}
# Other names of the same tasks: the paper's display names, the names DialogBench's released code
# uses (config/prompt.json keys) and its released data files' names (data/data_en, data/data_zh).
ALIASES = {
    "knowledge_grounded_response_generation": ["Knowledge-grounded Dialogue", "knowledge_first"],
    "intent_classification": ["Conversational QA", "intent_first"],
    "slot_filling": ["slot_filling_slot_first"],
    "emotion_detection": ["Emotion Classification", "emotion_1012"],
    "personality_grounded_response_generation": ["Persona-grounded Dialogue", "Persona-grounded Response Generation",
                                                 "persona_1012"],
    "multi_turn_response_generation": ["Multi-turn Response Selection", "Multi-trun Response Generation",
                                       "response_1011"],
    "dialogue_summarization": ["summary_1012"],
    "commonsense_aware_response_generation": ["Fact Correctness", "fact_first"],
    "dialogue_infilling": ["Question Generation", "question_first"],
    "offensive_detection": ["offensive_first"],
    "dialogue_nli": ["Dialogue NLI", "nli_premise"],
    "relation_classification": ["Relation Question", "relation_without_given_relation"],
}


def _name_key(name):
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


TASK_NAMES = {_name_key(name): slug for slug, (display, _) in TASKS.items()
              for name in [slug, display, *ALIASES[slug]]}


def task_slug(name):
    """Our task slug for any of a DialogBench task's names (case, spaces, hyphens and underscores aside),
    or None."""
    return TASK_NAMES.get(_name_key(name)) if isinstance(name, str) else None


EXTRAS = ("knowledge", "commonsense", "persona", "premise", "hypothesis", "response", "slot", "test_question")
OPTION_LETTERS = "ABCDEFGHIJ"


def multiple_choice_form():
    return {
        "primary": "answer",
        # Named in the raters' languages too (formschema's `labels`): DialogBench's Chinese items, KoDialogBench's.
        "questions": [{"key": "answer", "type": "single_choice", "label": "Choose the best option", "options": "item",
                       "labels": {"zh-hans": "选择最合适的选项", "ko": "가장 알맞은 보기를 고르세요"}}],
    }


def parse(path):
    items, tasks_seen = [], {}
    for number, record in json_lines(path):
        where = f"line {number}"
        external_id = require(path, where, record, "id", (str, int))
        task = require(path, where, record, "task", str)
        if task not in TASKS:
            raise ImportFailure(path, where, "task", f"expected one of {sorted(TASKS)}, got {task!r}")
        raw_turns = require(path, where, record, "dialogue", list)
        turns = (check_turns(path, where, raw_turns) if raw_turns and isinstance(raw_turns[0], dict)
                 else parse_speaker_lines(path, where, raw_turns))
        options = require(path, where, record, "options", dict)
        if len(options) < 2:
            raise ImportFailure(path, where, "options", f"expected at least 2 options keyed A.., got {len(options)}")
        expected_keys = list(OPTION_LETTERS[: len(options)])
        if sorted(options) != expected_keys:
            raise ImportFailure(path, where, "options", f"expected keys {expected_keys}, got {sorted(options)}")
        for key, text in options.items():
            if not isinstance(text, str) or not text.strip():
                raise ImportFailure(path, where, f"options.{key}", "expected a non-empty string")
        label = require(path, where, record, "label", str)
        if label not in options:
            raise ImportFailure(path, where, "label", f"expected one of the option keys {expected_keys}, got {label!r}")
        personality = record.get("personality") or {
            speaker: record[f"{speaker}_personality"]
            for speaker in ("speaker1", "speaker2") if f"{speaker}_personality" in record
        }
        if not isinstance(personality, dict):
            raise ImportFailure(path, where, "personality", "expected an object keyed by speaker")
        fields = {"options": {k: options[k] for k in expected_keys}}
        if record.get("question") is not None:
            fields["question"] = require(path, where, record, "question", str)
        for extra in EXTRAS:
            if record.get(extra) is not None:
                fields[extra] = record[extra]
        meta = {"domain": require(path, where, record, "domain", str, optional=True, default=""),
                "personality": personality}
        if record.get("language"):
            meta["language"] = require(path, where, record, "language", str)
        tasks_seen.setdefault(task, None)
        items.append(ItemRecord(task, str(external_id), turns, fields, meta, {"answer": label}, where))
    tasks = [TaskSpec(slug, TASKS[slug][0], multiple_choice_form(), TASKS[slug][1]) for slug in tasks_seen]
    return ParsedBenchmark(path, {"name": "DialogBench", "source": "DialogBench (Ou et al., 2023)"}, tasks, items)


# --- the published shapes (dialogbench_paper, dialogbench_released) -------------------------------

# Where an option is an object, the first of these keys that it holds is its text (the order
# DialogBench's released code reads them in, src/utils.py get_choice_content).
OPTION_TEXT_KEYS = ("answer", "text", "content", "person", "person1", "person2")


def _option_text(path, where, key, value):
    if isinstance(value, dict):
        value = next((value[k] for k in OPTION_TEXT_KEYS if value.get(k) is not None), None)
        if value is None:
            raise ImportFailure(path, where, key, "expected the option's text, or an object holding it under one of "
                                                  f"{list(OPTION_TEXT_KEYS)}")
    if not isinstance(value, str) or not value.strip() or value.strip().lower() == "none":
        raise ImportFailure(path, where, key, "expected a non-empty string")
    return value


def published_options(path, where, record, key):
    """(options keyed A.., gold letter) from a published option field: a dict keyed A-D, or keyed
    "1".."4" (read as A-D, and a numeric label with them), or a list of one-key dicts; an option may
    be an object holding its text."""
    raw = require(path, where, record, key, (dict, list))
    if isinstance(raw, list):
        pairs = []
        for index, entry in enumerate(raw):
            if not isinstance(entry, dict) or len(entry) != 1:
                raise ImportFailure(path, where, f"{key}[{index}]", 'expected a one-key object such as {"A": "..."}')
            pairs += entry.items()
    else:
        pairs = list(raw.items())
    numeric = any(k.isdigit() for k, _ in pairs)
    options = {}
    for k, value in pairs:
        letter = chr(int(k) + 64) if k.isdigit() and 0 < int(k) <= 26 else k
        options[letter] = _option_text(path, where, f"{key}.{k}", value)
    if len(options) < 2:
        raise ImportFailure(path, where, key, f"expected at least 2 options, got {len(options)}")
    expected = list(OPTION_LETTERS[: len(options)])
    if sorted(options) != expected:
        numbers = [str(n) for n in range(1, len(options) + 1)]
        raise ImportFailure(path, where, key, f"expected keys {expected} or {numbers}, got {[k for k, _ in pairs]}")
    label = require(path, where, record, "label", (str, int))
    label = str(label).strip()
    if numeric and label.isdigit() and 0 < int(label) <= len(options):
        label = chr(int(label) + 64)
    if label not in options:
        raise ImportFailure(path, where, "label", f"expected one of the option keys {expected}, got "
                                                  f"{record['label']!r}")
    return {k: options[k] for k in expected}, label


def published_tasks(tasks_seen):
    """Task specs of {slug: the names the file gave the task}; a name that is not ours (our name or slug, case and
    separators aside) is kept as the task's source name, so that a manager sees why Conversational_QA.json
    became Intent classification."""
    ours = {slug: {_name_key(slug), _name_key(TASKS[slug][0])} for slug in tasks_seen}
    return [TaskSpec(slug, TASKS[slug][0], multiple_choice_form(), TASKS[slug][1],
                     source_names=tuple(sorted(n for n in names or () if _name_key(n) not in ours[slug])))
            for slug, names in tasks_seen.items()]


def named_task(path, task):
    """The slug of a task the person named for a file (--task, the upload page's Task), refused when it is none."""
    slug = task_slug(task)
    if slug is None:
        raise ImportFailure(path, None, "--task", f"expected a DialogBench task name such as 'Emotion Detection' or "
                                                  f"'Dialogue NLI', got {task!r}")
    return slug


def published_name(record, stem, named_as=None):
    """The name the data gives the record's task: its `task` field, else the name the person gave, else the file's."""
    name = record.get("task")
    return name if isinstance(name, str) else named_as or stem


def published_task(path, where, record, stem, named=None):
    """The record's task by any of its names; without a `task` field, the task the person named (`named`, a slug),
    else the one the file's name names."""
    name = record.get("task")
    if name is None:
        slug = named or task_slug(stem)
        if slug is None:
            raise ImportFailure(path, where, "--task", f"no task: the file name {stem!r} names no DialogBench task; "
                                                       "name the file after its task (e.g. "
                                                       "Emotion_Classification.json) "
                                                       "or name the task (--task, or Task on the upload page), e.g. "
                                                       "'Emotion Detection'")
        return slug
    slug = task_slug(name)
    if slug is None:
        raise ImportFailure(path, where, "task", "expected a DialogBench task name such as 'Emotion Detection' or "
                                                 f"'Dialogue NLI', got {name!r}")
    return slug


def published_benchmark(path, tasks_seen, items, source):
    languages = {item.meta.get("language") for item in items}
    header = {"name": "DialogBench", "source": source, "licence": "MIT",
              "language": languages.pop() if len(languages) == 1 else ""}
    return ParsedBenchmark(path, header, published_tasks(tasks_seen), items)
