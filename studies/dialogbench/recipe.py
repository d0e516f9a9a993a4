"""DialogBench's own evaluation, as its released code runs it (github.com/kwai/DialogBench, commit
239a5cc50ff9ce4a259149dc71cdb1fd957de259): its prompts per task and language, its option string and
its answer extraction. Django-free and torch-free.

- `PROMPTS` reproduces config/prompt.json verbatim (the same 49 keys in the same order; serialised
  with `json.dumps(PROMPTS, ensure_ascii=False, indent=4)` it is that file byte for byte, git blob
  b76fba138d0c611b5013bb99b5e192451af1a3c7). A key is the task's name in the released code, then
  " Pretrain" for the base-model form, then " En" for English: "Emotion Classification" (SFT,
  Chinese), "Emotion Classification Pretrain En"...
- `option_str` is src/utils.py shuffle_choices' "A. text B. text" string.
- `extract_choice` is src/utils.py extract_choice (Chinese) and extract_choice_en (English): the
  "hard" answer (the reply starts with the letter) and the "easy" one (the hard one, else the
  first of an ordered list of patterns); the released code reports both accuracies, `score` from
  the easy answer and `socre_hard` from the hard one.
- The perplexity rule (src/baseEval.py _evaluate_pretrain) is `scorers.loglikelihood` with
  `MCItem(prompt_pretrain, option texts, delimiter="", add_special_tokens=True)` and the per-token
  pick: mean cross-entropy over the option's tokens, the lowest wins, context and continuation
  split as its `_encode_pair` (tokenizer.encode with the tokenizer's special tokens), the input cut
  from the left to MAX_LEN + 1 tokens.

The released data files hold their prompts ready made (prompt_SFT, prompt_pretrain): items
imported from them are asked exactly those. For items of other shapes the released code shows no
builder; the prompt is built here from PROMPTS with the dialogue as "speaker: text" lines: the SFT
form is the dialogue, a newline, then the instruction ("Based on the content of the above
dialogue..."), and the pretrain form has the dialogue in its {dialogue_content} slot.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping

from ..text import render_dialogue

MAX_LEN = 2048  # src/utils.py: the pretrain input is cut from the left to this many tokens (+ 1)
MAX_NEW_TOKENS = 128  # src/utils.py GEN_KWARGS: greedy, 128 new tokens
PRESET = "dialogbench"

# --- evaluators (src/evaluate.py): how a chat model is asked -------------------------------------------------
# evaluate.py picks a chat model's evaluator by the first of these names found in the model's name, in this order;
# a model with none gets EvalModel (src/baseEval.py _evaluate_SFT): prompt_SFT as it is, no chat template, encoded
# with the tokenizer's special tokens. The ChatGPT and GPT-4 rows ran through OpenAI's API ("api").
EVALUATORS = ("kwaiyii", "chatglm", "baichuan", "qwen", "moss", "internlm", "llama")
RAW, API = "default", "api"
AUTO = "auto"  # the run's setting until start_run reads the model: then one of the above
# src/qwen.py and src/baichuan.py ask every item once with the answer at each position (shuffle_choices with
# index=0..n-1: the gold option swapped there) and pool the result: accuracy over every (item, position).
EACH_POSITION = ("qwen", "baichuan")
# The paper, section 4 (Implementation Details): "we set the temperature to 0, the presence_penalty to 0.6, and the
# frequency_penalty to 0 for ChatGPT and GPT-4".
API_REQUEST = {"presence_penalty": 0.6, "frequency_penalty": 0}

# src/chat_template.py DEFAULT_SYSTEM_PROMPT as Python reads it: its lines ending in a backslash are joined
# without a space ("Youranswers", "ensurethat", "notcorrect").
LLAMA2_SYSTEM_PROMPT = (
    "You are a helpful, respectful and honest assistant. Always answer as helpfully as possible, while being safe. "
    "Youranswers should not include any harmful, unethical, racist, sexist, toxic, dangerous, or illegal content. "
    "Please ensurethat your responses are socially unbiased and positive in nature.\n\nIf a question does not make "
    "any sense, or is not factually coherent, explain why instead of answering something notcorrect. If you don't "
    "know the answer to a question, please don't share false information.")


def evaluator_for(names, is_api: bool) -> str:
    """The evaluator src/evaluate.py gives a chat model, read from its names (ours, the endpoint's model name, its
    source folder): the first of EVALUATORS found in any of them; "api" for a model behind an API."""
    if is_api:
        return API
    text = " ".join(str(n) for n in names if n).lower()
    return next((name for name in EVALUATORS if name in text), RAW)


def position_policy(mode: str, settings: Mapping) -> str:
    """The options' order a run is scored in unless asked: the released Qwen and Baichuan evaluators ask every item
    with the answer at each position and pool the result; the other evaluators and the perplexity scoring take the
    options as the data gives them."""
    if mode == "generate" and settings.get("evaluator") in EACH_POSITION:
        return "gold_at_each_position"
    return "as_is"


def llama2_prompt(user: str, bos_token: str) -> str:
    """src/llama.py: the one user message rendered by src/chat_template.py's template with its default system
    prompt (no system message given): bos, "[INST] ", "<<SYS>>\\n" system "\\n<</SYS>>\\n\\n" and the message,
    stripped, then " [/INST]"; the tokenizer then adds no special token of its own."""
    content = "<<SYS>>\n" + LLAMA2_SYSTEM_PROMPT + "\n<</SYS>>\n\n" + user
    return bos_token + "[INST] " + content.strip() + " [/INST]"

# config/prompt.json, verbatim.
PROMPTS = {
    "Conversational QA":
        "基于以上对话内容，根据提问，仅输出候选选项中的正确答案对应的序号【提问】{test_question}【候选选项】{option_str}",
    "Emotion Classification":
        "基于以上对话内容，根据提问，仅输出候选选项中的正确答案对应的序号【提问】{test_question}【候选选项】{option_str}",
    "Slot Filling":
        "基于以上对话内容，根据提问，仅输出候选选项中的正确答案对应的序号【提问】{test_question}【候选选项】{option_str}",
    "Dialogue NLI":
        "基于以上对话内容，判断假设与对话内容之间的语义关系，仅输出候选选项中的正确答案对应的序号【假设】{hypothesis}【候选选项】{option_str}",
    "Relation Classification":
        "基于以上对话内容，分析候选选项中哪一个选项符合该对话体现的双方人物关系，仅输出候选选项中相应的序号【候选选项】{option_str}",
    "Offensive Detection":
        "基于以上对话内容，分析该对话是否存在言论冒犯的情况，仅输出候选选项中相应的序号【候选选项】{option_str}",
    "Dialogue Infilling":
        "基于以上对话内容，分析候选选项中哪一个选项是给定答案对应的提问，仅输出候选选项中相应的序号【答案】{response}【候选选项】{option_str}",
    "Multi-turn Response Selection":
        "基于以上对话内容，分析候选选项中哪一个选项是该对话上下文最连贯且最恰当的回复，仅输出候选选项中相应的序号【候选选项】{option_str}",
    "Dialogue Summarization":
        "基于以上对话内容，分析候选选项中哪一个选项是该对话最合适的摘要，仅输出候选选项中相应的序号【候选选项】{option_str}",
    "Knowledge-grounded Dialogue":
        "基于以上对话内容，分析候选选项中哪一个回复最符合给定的知识，仅输出候选选项中相应的序号【知识】{knowledge}【候选选项】{option_str}",
    "Fact Correctness":
        "基于以上对话内容，分析候选选项中哪一个回复包含正确的常识知识，仅输出候选选项中相应的序号【候选选项】{option_str}",
    "Persona-grounded Dialogue":
        "基于以上对话内容，分析候选选项中哪一个回复最符合给定的人物性格，仅输出候选选项中相应的序号【人物性格】{persona}【候选选项】{option_str}",
    "Dialogue NLI Pretrain":
        "读取以下对话内容，推理目标陈述句与对话内容之间的语义关系，生成正确的答案【对话内容】{dialogue_content}【假设】{hypothesis}【答案】",
    "Relation Classification Pretrain":
        "读取以下对话内容，生成最符合该对话所体现的双方人物关系【对话内容】{dialogue_content}【人物关系】",
    "Offensive Detection Pretrain":
        "读取以下对话内容，判断该对话是否存在言论冒犯的情况【对话内容】{dialogue_content}【答案】",
    "Knowledge-grounded Dialogue Pretrain":
        "读取以下对话内容和知识，生成最符合给定知识的回复【对话内容】{dialogue_content}【知识】{knowledge}【回复】",
    "Conversational QA Pretrain":
        "读取以下对话内容，根据给定的提问，生成正确的答案【对话内容】{dialogue_content}【提问】{test_question}【答案】",
    "Emotion Classification Pretrain":
        "读取以下对话内容，根据给定的提问，生成正确的答案【对话内容】{dialogue_content}【提问】{test_question}【答案】",
    "Slot Filling Pretrain":
        "读取以下对话内容，根据给定的提问，生成正确的答案【对话内容】{dialogue_content}【提问】{test_question}【答案】",
    "Dialogue Infilling Pretrain":
        "读取以下对话内容和最后一个轮次的系统回复，补全最后一个轮次中合理的用户话语【对话内容】{dialogue_content}【回复】{response}【用户话语】",
    "Multi-turn Response Selection Pretrain":
        "读取以下对话内容，生成最连贯以及最合理的回复【对话内容】{dialogue_content}【回复】",
    "Dialogue Summarization Pretrain":
        "读取以下对话内容，生成该对话最合适的摘要【对话内容】{dialogue_content}【摘要】",
    "Fact Correctness Pretrain":
        "读取以下对话内容，生成包含正确常识知识的回复【对话内容】{dialogue_content}【回复】",
    "Persona-grounded Dialogue Pretrain":
        "读取以下对话内容和人物性格，生成最符合给定人物性格的回复【对话内容】{dialogue_content}【人物性格】{persona}【回复】",
    "Conversational QA En":
        "Based on the content of the above dialogue, only output the option letter corresponding to the correct answer "
        "in the candidate options according to the question【Question】{test_question}【Candidate "
        "options】{option_str}",
    "Emotion Classification En":
        "Based on the content of the above dialogue, only output the option letter corresponding to the correct answer "
        "in the candidate options according to the question【Question】{test_question}【Candidate "
        "options】{option_str}",
    "Slot Filling En":
        "Based on the content of the above dialogue, only output the option letter corresponding to the correct answer "
        "in the candidate options according to the question【Question】{test_question}【Candidate "
        "options】{option_str}",
    "Dialogue NLI En":
        "Based on the content of the above dialogue, according to the semantic relationship between the hypothesis and "
        "the dialogue content, only output the option letter corresponding to the correct answer in the candidate "
        "options【Hypothesis】{hypothesis}【Candidate options】{option_str}",
    "Relation Classification En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options is in line with the relationship between the two characters in the dialogue, only output the "
        "corresponding option letter in the candidate options【Candidate options】{option_str}",
    "Offensive Detection En":
        "Based on the content of the above dialogue, according to the analysis of whether there is any offensive "
        "speech in the dialogue, only output the corresponding option letter in the candidate options【Candidate "
        "options】{option_str}",
    "Dialogue Infilling En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options is the question corresponding to the given answer, only output the corresponding option letter in the "
        "candidate options【Answer】{response}【Candidate options】{option_str}",
    "Multi-turn Response Selection En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options can best answer the dialogue context, only output the corresponding option letter in the candidate "
        "options【Candidate options】{option_str}",
    "Dialogue Summarization En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options is the most suitable summary of the dialogue, only output the corresponding option letter in the "
        "candidate options【Candidate options】{option_str}",
    "Knowledge-grounded Dialogue En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options is the most suitable reply to the given knowledge, only output the corresponding option letter in the "
        "candidate options【Knowledge】{knowledge}【Candidate options】{option_str}",
    "Fact Correctness En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options contains the correct common sense knowledge, only output the corresponding option letter in the "
        "candidate options【Candidate options】{option_str}",
    "Fact_Correctness En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options contains the correct common sense knowledge, only output the corresponding option letter in the "
        "candidate options【Candidate options】{option_str}",
    "Persona-grounded Dialogue En":
        "Based on the content of the above dialogue, according to the analysis of which option in the candidate "
        "options is the most suitable reply to the given character personality, only output the corresponding option "
        "letter in the candidate options【Persona】{persona}【Candidate options】{option_str}",
    "Dialogue NLI Pretrain En":
        "Read the following dialogue content, according to the semantic relationship between the target statement and "
        "the dialogue content, generate the correct answer【Dialogue "
        "content】{dialogue_content}【Hypothesis】{hypothesis}【Answer】",
    "Relation Classification Pretrain En":
        "Read the following dialogue content, generate the relationship between the two characters that best reflects "
        "the dialogue【Dialogue content】{dialogue_content}【Relationship】",
    "Offensive Detection Pretrain En":
        "Read the following dialogue content, judge whether there is any offensive speech in the dialogue【Dialogue "
        "content】{dialogue_content}【Answer】",
    "Knowledge-grounded Dialogue Pretrain En":
        "Read the following dialogue content and knowledge, generate the reply that best matches the given "
        "knowledge【Dialogue content】{dialogue_content}【Knowledge】{knowledge}【Reply】",
    "Conversational QA Pretrain En":
        "Read the following dialogue content, generate the correct answer according to the given question【Dialogue "
        "content】{dialogue_content}【Question】{test_question}【Answer】",
    "Emotion Classification Pretrain En":
        "Read the following dialogue content, generate the correct answer according to the given question【Dialogue "
        "content】{dialogue_content}【Question】{test_question}【Answer】",
    "Slot Filling Pretrain En":
        "Read the following dialogue content, generate the correct answer according to the given question【Dialogue "
        "content】{dialogue_content}【Question】{test_question}【Answer】",
    "Dialogue Infilling Pretrain En":
        "Read the following dialogue content and the system reply in the last round, complete the reasonable user "
        "speech in the last round【Dialogue content】{dialogue_content}【Reply】{response}【User speech】",
    "Multi-turn Response Selection Pretrain En":
        "Read the following dialogue content, generate the most coherent and reasonable reply【Dialogue "
        "content】{dialogue_content}【Reply】",
    "Dialogue Summarization Pretrain En":
        "Read the following dialogue content, generate the most suitable summary of the dialogue【Dialogue "
        "content】{dialogue_content}【Summary】",
    "Fact Correctness Pretrain En":
        "Read the following dialogue content, generate a reply containing correct common sense knowledge【Dialogue "
        "content】{dialogue_content}【Reply】",
    "Persona-grounded Dialogue Pretrain En":
        "Read the following dialogue content and character personality, generate the reply that best matches the given "
        "character personality【Dialogue content】{dialogue_content}【Persona】{persona}【Reply】",
}

# Our task slugs (benchmarks.importers.dialogbench.TASKS) -> the released code's task names.
TASK_NAMES = {
    "knowledge_grounded_response_generation": "Knowledge-grounded Dialogue",
    "intent_classification": "Conversational QA",
    "slot_filling": "Slot Filling",
    "emotion_detection": "Emotion Classification",
    "personality_grounded_response_generation": "Persona-grounded Dialogue",
    "multi_turn_response_generation": "Multi-turn Response Selection",
    "dialogue_summarization": "Dialogue Summarization",
    "commonsense_aware_response_generation": "Fact Correctness",
    "dialogue_infilling": "Dialogue Infilling",
    "offensive_detection": "Offensive Detection",
    "dialogue_nli": "Dialogue NLI",
    "relation_classification": "Relation Classification",
}
# The paper's task abbreviations (Tables 2 and 3), by our task slugs, in its column order.
ABBREVIATIONS = {
    "slot_filling": "SF", "intent_classification": "IC", "knowledge_grounded_response_generation": "KRG",
    "commonsense_aware_response_generation": "CRG", "dialogue_infilling": "DI", "multi_turn_response_generation": "MRG",
    "personality_grounded_response_generation": "PRG", "relation_classification": "RC", "emotion_detection": "ED",
    "dialogue_nli": "NLI", "dialogue_summarization": "DS", "offensive_detection": "OD",
}
FORMS = ("sft", "pretrain")
SFT_FIELD, PRETRAIN_FIELD = "prompt_SFT", "prompt_pretrain"


def prompt_key(task: str, language: str, form: str) -> str:
    """The config/prompt.json key of a task (our slug or the released name) in a language and form."""
    name = TASK_NAMES.get(task, task)
    return name + (" Pretrain" if form == "pretrain" else "") + (" En" if language != "zh" else "")


def prompts_for(language: str, form: str) -> dict[str, str]:
    """The preset's prompts for one language and form, keyed by the released task names: what a run
    stores as its template."""
    return {name: PROMPTS[prompt_key(name, language, form)] for name in TASK_NAMES.values()}


def option_str(options: Mapping[str, str]) -> str:
    """src/utils.py shuffle_choices: '%s. %s ' per option, stripped."""
    text = ""
    for key, value in options.items():
        text += f"{key}. {value} "
    return text.strip()


# --- answer extraction (src/utils.py extract_choice, extract_choice_en) -----------------------

CHOICES = ("A", "B", "C", "D")
ZH_SINGLE = [
    (r"答案(选项)?(是|为)：? ?([ABCD])", 3),
    (r"答案(是|为)选项 ?([ABCD])", 2),
    (r"故?选择?：? ?([ABCD])", 1),
    (r"([ABCD]) ?选?项(是|为)?正确", 1),
    (r"正确的?选项(是|为) ?([ABCD])", 2),
    (r"答案(应该)?(是|为)([ABCD])", 3),
    (r"选项 ?([ABCD]) ?(是|为)?正确", 1),
    (r"选择答案 ?([ABCD])", 1),
    (r"答案?：?([ABCD])", 1),
    (r"([ABCD])(选?项)?是?符合题意", 1),
    (r"答案选项：? ?([ABCD])", 1),
    (r"答案(选项)?为(.*?)([ABCD])", 3),
]
ZH_RECURSIVE = [(r"([ABCD])(.*?)当选", 1), (r"([ABCD])(.*?)正确", 1)]
ZH_WEAK = [(r"[^不]是：? ?([ABCD])", 1)]
ZH_ONLY_ONE = r"^[^ABCD]*([ABCD])[^ABCD]*$"
EN_HARD = r"^\s*[ABCD](?![a-zA-Z])"
EN_SINGLE = [
    (r"is option ([ABCD])", 1),
    (r"answer: ?([ABCD])", 1),
    (r"is:\n\n?([ABCD])", 1),
    (r"is ?([ABCD])", 1),
    (r"is ([ABCD])", 1),
    (r"so, choose: ?([ABCD])", 1),
    (r"choose ([ABCD])", 1),
    (r"([ABCD])\.", 1),
    (r"would be ([ABCD])", 1),
    (r"be ([ABCD])", 1),
    (r"option ([ABCD])", 1),
    (r"Option ([ABCD])", 1),  # listed twice in the released code; the second can never match first
    (r"【Candidate options】([ABCD])", 1),
    (r"\[([ABCD])\]", 1),
    (r"\(([ABCD])\)", 1),
    (r"\{([ABCD])\}", 1),
    (r"is ?\(([ABCD])\)", 1),
    (r"is \(([ABCD])\)", 1),
]


def extract_choice(response, language: str = "zh") -> tuple[str | None, str | None]:
    """(hard, easy) answers read from a reply, each a letter A-D or None; `language` as the released
    code takes it ("en" anywhere in it means English)."""
    if "en" in language.lower():
        return _extract_en(response)
    response = str(response).strip()
    if not response:
        return None, None
    if response[0] in CHOICES:
        return response[0], response[0]
    for pattern, group in ZH_SINGLE:
        if m := re.search(pattern, response, re.M):
            return None, m.group(group)
    for pattern, group in ZH_RECURSIVE:
        if m := re.search(pattern, response, re.M):
            # The last letter of nested matches: each search restarts one character into the match.
            while m:
                answer = m.group(group)
                m = re.search(pattern, m.group(0)[1:], re.M)
            return None, answer
    for pattern, group in ZH_WEAK:
        if m := re.search(pattern, response, re.M):
            return None, m.group(group)
    if m := re.match(ZH_ONLY_ONE, response):
        return None, m.group(1)
    return None, None


def _extract_en(response) -> tuple[str | None, str | None]:
    response = str(response)
    if (m := re.search(EN_HARD, response)) is not None:
        return m.group(0).strip(), m.group(0).strip()
    for pattern, group in EN_SINGLE:
        if m := re.search(pattern, response, re.M):
            return None, m.group(group)
    return None, None


# --- prompts for items -------------------------------------------------------------------------


def _value(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def item_prompt(task: str, fields: Mapping, turns, options: Mapping[str, str], form: str,
                templates: Mapping[str, str]) -> str:
    """The prompt DialogBench asks for an item: its own prompt_SFT / prompt_pretrain when it has one
    (the SFT one with its option string swapped for `options` when their order differs, as
    src/qwen.py does for its shuffled orders), else built from `templates` (task name -> prompt, as
    `prompts_for` gives)."""
    own = fields.get(SFT_FIELD if form == "sft" else PRETRAIN_FIELD)
    given = fields.get("options") or {}
    if own:
        if form == "pretrain" or dict(options) == dict(given):
            return own
        original = option_str(given)
        if not original or original not in own:
            raise ValueError(f"cannot reorder the options of a prompt_SFT that does not hold {original!r}")
        return own.replace(original, option_str(options))
    name = TASK_NAMES.get(task)
    if name is None or name not in templates:
        raise ValueError(f"no DialogBench prompt for task {task!r}; expected one of {sorted(TASK_NAMES)}")
    values = {key: _value(value) for key, value in fields.items() if value is not None}
    if "test_question" not in values and "question" in values:
        values["test_question"] = values["question"]
    values.update(option_str=option_str(options), dialogue_content=render_dialogue(turns))
    try:
        body = templates[name].format(**values)
    except KeyError as error:
        raise ValueError(f"the DialogBench prompt for {name!r} needs the item field {error.args[0]!r}") from None
    return body if form == "pretrain" else values["dialogue_content"] + "\n" + body
