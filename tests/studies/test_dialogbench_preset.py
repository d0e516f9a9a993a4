"""DialogBench's own evaluation held against its released code (github.com/kwai/DialogBench at
239a5cc50ff9ce4a259149dc71cdb1fd957de259): config/prompt.json, src/utils.py (shuffle_choices'
option string, extract_choice, extract_choice_en) and src/baseEval.py (_encode_pair, the perplexity
of each choice). Every expected value below was written from that code and checked by running it.
"""
import hashlib
import json

import pytest

from modeleval import modes
from modeleval.modes import multiple_choice
from modeleval.scorers.loglikelihood import MCItem, encode_pair, score_one_by_one, score_shared_context
from studies.dialogbench import modes as dialogbench_modes
from studies.dialogbench import recipe as dialogbench

# git's blob id of config/prompt.json at that commit: the file byte for byte.
PROMPT_JSON_BLOB = "b76fba138d0c611b5013bb99b5e192451af1a3c7"


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_the_prompts_are_the_released_config_prompt_json_byte_for_byte():
    serialised = json.dumps(dialogbench.PROMPTS, ensure_ascii=False, indent=4).encode("utf-8")
    assert git_blob_id(serialised) == PROMPT_JSON_BLOB
    assert len(dialogbench.PROMPTS) == 49
    # A few of them written out, one per form and language.
    assert dialogbench.PROMPTS["Emotion Classification"] == (
        "基于以上对话内容，根据提问，仅输出候选选项中的正确答案对应的序号【提问】{test_question}【候选选项】{option_str}")
    assert dialogbench.PROMPTS["Dialogue NLI Pretrain"] == (
        "读取以下对话内容，推理目标陈述句与对话内容之间的语义关系，生成正确的答案【对话内容】{dialogue_content}【假设】{hypothesis}【答案】")
    assert dialogbench.PROMPTS["Offensive Detection En"] == (
        "Based on the content of the above dialogue, according to the analysis of whether there is any offensive "
        "speech in the dialogue, only output the corresponding option letter in the candidate options"
        "【Candidate options】{option_str}")
    assert dialogbench.PROMPTS["Persona-grounded Dialogue Pretrain En"] == (
        "Read the following dialogue content and character personality, generate the reply that best matches the "
        "given character personality【Dialogue content】{dialogue_content}【Persona】{persona}【Reply】")


@pytest.mark.parametrize("language,form,suffix", [("en", "sft", " En"), ("zh", "sft", ""),
                                                   ("en", "pretrain", " Pretrain En"), ("zh", "pretrain", " Pretrain")])
def test_every_task_has_its_prompt_in_each_language_and_form(language, form, suffix):
    prompts = dialogbench.prompts_for(language, form)
    assert len(prompts) == 12
    assert prompts == {name: dialogbench.PROMPTS[name + suffix] for name in dialogbench.TASK_NAMES.values()}
    # The preset's run template is these prompts.
    mode = "loglikelihood" if form == "pretrain" else "generate"
    settings = modes.resolve_settings(mode, language, {"preset": "dialogbench"})
    version, template = modes.default_template(mode, settings)
    assert json.loads(template) == prompts and version == f"dialogbench-{form}-{language}/1"


def test_preset_settings():
    generate = modes.resolve_settings("generate", "en", {"preset": "dialogbench"})
    assert generate["max_new_tokens"] == 128 and "instruction" not in generate  # GEN_KWARGS
    loglik = modes.resolve_settings("loglikelihood", "zh", {"preset": "dialogbench"})
    assert (loglik["continuation"], loglik["rule"]) == ("text", "per_token")
    with pytest.raises(ValueError, match="option text"):
        modes.resolve_settings("loglikelihood", "en", {"preset": "dialogbench", "continuation": "letter"})
    with pytest.raises(ValueError, match="unknown preset"):
        modes.resolve_settings("generate", "en", {"preset": "mmlu"})
    with pytest.raises(ValueError, match="preset must be one of"):  # rating modes have presets of their own
        modes.resolve_settings("rating", "en", {"preset": "dialogbench"})
    with pytest.raises(ValueError, match="JSON object of task name -> prompt"):
        multiple_choice.preset_prompts("{dialogue}\nAnswer:")


def test_option_string():
    # shuffle_choices: '%s. %s ' per choice, stripped; in a shuffled order the letters stay in place.
    assert dialogbench.option_str({"A": "x", "B": "y", "C": "z"}) == "A. x B. y C. z"
    assert dialogbench.option_str({"A": "x", "B": "z", "C": "y"}) == "A. x B. z C. y"


EN = [  # reply -> (hard, easy), extract_choice_en
    ("A", ("A", "A")),
    ("  B. Because it fits", ("B", "B")),
    ("A person like that", ("A", "A")),  # the hard rule: a letter not followed by a letter
    ("Answer: C", (None, None)),  # "answer: " is matched lower case only
    ("answer:D", (None, "D")),
    ("The correct answer is option D.", (None, "D")),
    ("I think (B) is right", (None, "B")),
    ("This is A", (None, "A")),
    ("It is Clear that A fits", (None, "C")),  # "is ?([ABCD])" reads the C of "Clear"
    ("the answer would be B", (None, "B")),
    ("The answer is:\n\nC", (None, "C")),
    ("I choose C", (None, "C")),
    ("[A]", (None, "A")),
    ("{D}", (None, "D")),
    ("Option A", (None, "A")),
    ("【Candidate options】B", (None, "B")),
    ("Dialogue", (None, None)),
    ("Cats are nice.", (None, None)),
    ("", (None, None)),
]
ZH = [  # extract_choice
    ("B", ("B", "B")),
    (" C", ("C", "C")),
    ("A和B都不对，C当选", ("A", "A")),  # the first character decides the hard answer
    ("答案是C", (None, "C")),
    ("我认为正确选项为 D", (None, "D")),
    ("故选：A", (None, "A")),
    ("答案为：选项B", (None, "B")),
    ("选择答案C", (None, "C")),
    ("答案应该是B", (None, "B")),
    ("选项 C 是正确的", (None, "C")),
    ("这个答案为第三个也就是C", (None, "C")),
    ("我认为A和B都不对，C当选", (None, "C")),  # the recursive match: the last of nested matches
    ("其中B和C中，C正确", (None, "C")),
    ("不是A，是B", (None, "B")),  # the weak match
    ("我觉得是 D", (None, "D")),
    ("它不是A", (None, "A")),  # not the weak match, but the only letter mentioned
    ("选项中只有D", (None, "D")),
    ("可能是A或者B", (None, "A")),
    ("我无法判断", (None, None)),
    ("", (None, None)),
]


@pytest.mark.parametrize("reply,expected", EN, ids=[repr(r) for r, _ in EN])
def test_english_extraction(reply, expected):
    assert dialogbench.extract_choice(reply, "en") == expected
    assert dialogbench.extract_choice(reply, "English") == expected


@pytest.mark.parametrize("reply,expected", ZH, ids=[repr(r) for r, _ in ZH])
def test_chinese_extraction(reply, expected):
    assert dialogbench.extract_choice(reply, "zh") == expected
    assert dialogbench.extract_choice(reply, "Chinese") == expected


class Item:
    def __init__(self, slug, fields, dialogue):
        self.task = type("Task", (), {"slug": slug})()
        self.fields, self.dialogue, self.external_id = fields, dialogue, "x"


def render(item, mode, language, policy="as_is"):
    settings = modes.resolve_settings(mode, language, {"preset": "dialogbench"})
    _, template = modes.default_template(mode, settings)
    return [multiple_choice.render_mc(template, item, variant, settings, mode)
            for variant in multiple_choice.variants(item, "answer", policy)]


TURNS = [{"speaker": "speaker1", "text": "I passed!"}, {"speaker": "speaker2", "text": "Well done."}]


def test_items_with_their_own_prompts_are_asked_them():
    sft = "speaker1: I passed!\n" + dialogbench.PROMPTS["Emotion Classification En"].format(
        test_question="How does speaker1 feel?", option_str="A. Joy B. Anger C. Fear")
    pretrain = dialogbench.PROMPTS["Emotion Classification Pretrain En"].format(
        dialogue_content="speaker1: I passed!", test_question="How does speaker1 feel?")
    item = Item("emotion_detection", {"options": {"A": "Joy", "B": "Anger", "C": "Fear"}, "prompt_SFT": sft,
                                      "prompt_pretrain": pretrain}, TURNS)
    item.source_gold = {"answer": "A"}
    assert render(item, "generate", "en") == [sft]
    assert render(item, "loglikelihood", "en") == [pretrain]
    # With the gold moved to each position, the option string is swapped as src/qwen.py does.
    moved = render(item, "generate", "en", "gold_at_each_position")
    assert moved[1] == sft.replace("A. Joy B. Anger C. Fear", "A. Anger B. Joy C. Fear")
    assert moved[2] == sft.replace("A. Joy B. Anger C. Fear", "A. Fear B. Anger C. Joy")


def test_items_of_other_shapes_get_the_prompt_built_from_prompt_json():
    item = Item("dialogue_nli", {"options": {"A": "entailment", "B": "contradiction", "C": "neutral"},
                                 "hypothesis": "speaker1 failed."}, TURNS)
    item.source_gold = {"answer": "B"}
    dialogue = "speaker1: I passed!\nspeaker2: Well done."
    assert render(item, "generate", "en") == [
        dialogue + "\nBased on the content of the above dialogue, according to the semantic relationship between "
        "the hypothesis and the dialogue content, only output the option letter corresponding to the correct answer "
        "in the candidate options【Hypothesis】speaker1 failed.【Candidate options】A. entailment B. contradiction "
        "C. neutral"]
    assert render(item, "loglikelihood", "zh") == [
        "读取以下对话内容，推理目标陈述句与对话内容之间的语义关系，生成正确的答案【对话内容】" + dialogue
        + "【假设】speaker1 failed.【答案】"]
    # Our own DialogBench shape's `question` is the prompts' test_question.
    qa = Item("intent_classification", {"options": {"A": "to book", "B": "to cancel"}, "question": "Why?"}, TURNS)
    qa.source_gold = {"answer": "A"}
    assert render(qa, "generate", "zh")[0].endswith("【提问】Why?【候选选项】A. to book B. to cancel")
    missing = Item("dialogue_nli", {"options": {"A": "x", "B": "y"}}, TURNS)
    missing.source_gold = {"answer": "A"}
    with pytest.raises(ValueError, match="needs the item field 'hypothesis'"):
        render(missing, "generate", "en")


class CharTokenizer:
    """One token per character, a BOS (id 1) in front when special tokens are added, as a Llama
    tokenizer's encode does."""

    def encode(self, text, add_special_tokens=True):
        return ([1] if add_special_tokens else []) + [ord(c) for c in text]


def test_encode_pair_as_dialogbench_splits_context_and_choice():
    tok = CharTokenizer()
    # _encode_pair: trailing spaces of the context go to the continuation; both encodings keep the
    # tokenizer's special tokens, so the BOS stays with the context.
    assert encode_pair(tok, "Q: hi ", "Joy", add_special_tokens=True) == (
        [1] + [ord(c) for c in "Q: hi"], [ord(c) for c in " Joy"])
    # lm-eval's split, without them, is unchanged.
    assert encode_pair(tok, "Q: hi ", "Joy") == ([ord(c) for c in "Q: hi"], [ord(c) for c in " Joy"])


@pytest.mark.model
def test_perplexity_rule_is_the_released_cross_entropy(smol):
    """_evaluate_pretrain: logits of the model on (context + choice)[-(MAX_LEN + 1):][:-1], the last
    len(choice) rows, CrossEntropyLoss (mean over the choice's tokens), exp; the lowest wins."""
    import math

    import torch

    model, tokenizer = smol.model, smol.tokenizer
    context = dialogbench.PROMPTS["Emotion Classification Pretrain En"].format(
        dialogue_content="speaker1: I finally passed my exam!\nspeaker2: Congratulations!",
        test_question="How does speaker1 feel?")
    choices = {"A": "Joy", "B": "Anger", "C": "Fear", "D": "Sadness"}
    released = []
    for key, target in choices.items():
        context_enc, target_enc = encode_pair(tokenizer, context, target, add_special_tokens=True)
        assert context_enc == tokenizer.encode(context)  # tokenizer.encode as the released code calls it
        input_ids = torch.tensor((context_enc + target_enc)[-(dialogbench.MAX_LEN + 1):][:-1])
        with torch.no_grad():
            logits = model(input_ids.unsqueeze(0))["logits"].float()
        rows = logits[:, len(input_ids) - len(target_enc): len(input_ids), :]
        loss = torch.nn.CrossEntropyLoss()(rows.squeeze(0), torch.tensor(target_enc))
        released.append((math.exp(loss.item()), key))
    pred = sorted(released, key=lambda x: x[0])[0][1]

    item = MCItem(context, tuple(choices.values()), delimiter="", add_special_tokens=True)
    for result in (score_one_by_one(model, tokenizer, [item], max_length=dialogbench.MAX_LEN)[0],
                   score_shared_context(model, tokenizer, [item], max_length=dialogbench.MAX_LEN)[0]):
        for (ppl, _), option in zip(released, result.options, strict=True):
            assert math.exp(-option.mean_logprob) == pytest.approx(ppl, rel=1e-4)
        assert list(choices)[result.pred_per_token] == pred


# src/chat_template.py's DEFAULT_SYSTEM_PROMPT as Python evaluates it (its backslash-ended lines joined): sha256,
# length.
LLAMA2_SYSTEM_SHA256, LLAMA2_SYSTEM_CHARS = "920da021b99aa91146408046aebc339addd902489e28bd723daf7e490ef150db", 504


@pytest.mark.parametrize("names, is_api, expected", [
    (("qwen-7b-chat", "/models/Qwen/Qwen-7B-Chat", ""), False, "qwen"),
    (("b2", "/models/baichuan-inc/Baichuan2-13B-Chat", ""), False, "baichuan"),
    (("llama2-chat", "/models/meta-llama/Llama-2-7b-chat-hf", ""), False, "llama"),
    (("THUDM-chatglm2-6b", "", ""), False, "chatglm"),
    (("internlm-chat-7b", "", ""), False, "internlm"),
    (("moss-moon-003-sft", "", ""), False, "moss"),
    (("qwen-from-llama", "", ""), False, "qwen"),  # evaluate.py tests qwen before llama
    (("smollm2-135m-instruct", "packaged", ""), False, "default"),  # no evaluator of its own: EvalModel
    (("vicuna-13b", "/models/lmsys/vicuna-13b-v1.5", ""), False, "default"),
    (("gpt4", "https://api.example.com/v1", "gpt-4-0314"), True, "api"),
])
def test_the_evaluator_is_read_from_the_models_names_as_evaluate_py_dispatches(names, is_api, expected):
    """src/evaluate.py: kwaiyii, chatglm, baichuan, qwen, moss, internlm, llama looked for in the model's name in
    that order; any other model gets EvalModel (src/baseEval.py _evaluate_SFT)."""
    assert dialogbench.evaluator_for(names, is_api) == expected
    auto = modes.resolve_settings("generate", "en", {"preset": "dialogbench"})
    assert auto["evaluator"] == "auto"
    spec = type("Spec", (), {"name": names[0], "source": names[1], "api_model": names[2], "is_api": is_api})
    settled = multiple_choice.for_model("generate", auto, spec)
    assert settled["evaluator"] == expected
    each = "gold_at_each_position" if expected in ("qwen", "baichuan") else "as_is"
    assert multiple_choice.default_position_policy("generate", settled) == each
    with pytest.raises(ValueError, match="evaluator"):
        multiple_choice.for_model("generate", {**auto, "evaluator": "default" if is_api else "api"}, spec)


def test_llama2_is_asked_in_the_released_chat_template_with_its_default_system_prompt():
    """src/llama.py renders the item's message with src/chat_template.py default_chat_template: bos_token, "[INST] ",
    the default system prompt between <<SYS>> markers, the message, " [/INST]", all of it stripped inside."""
    prompt = dialogbench.LLAMA2_SYSTEM_PROMPT
    assert (hashlib.sha256(prompt.encode()).hexdigest(), len(prompt)) == (LLAMA2_SYSTEM_SHA256, LLAMA2_SYSTEM_CHARS)
    assert "Youranswers should not" in prompt and "ensurethat" in prompt and "notcorrect" in prompt
    assert dialogbench.llama2_prompt("speaker1: Hi\nWhich option? ", "<s>") == (
        "<s>[INST] <<SYS>>\n" + prompt + "\n<</SYS>>\n\nspeaker1: Hi\nWhich option? [/INST]")
    render = dialogbench_modes.EVALUATOR_RENDER
    tokenizer = type("Tokenizer", (), {"bos_token": "<s>"})
    assert render["llama"](tokenizer, "Q") == (dialogbench.llama2_prompt("Q", "<s>"), False)
    assert render["default"](tokenizer, "Q") == ("Q", True)  # EvalModel: the prompt as it is, with special tokens


def test_the_protocol_lists_each_evaluators_remaining_differences_and_a_changed_option_order():
    """What the run differs in from the study, with why: every generate run the reply limit (the code's 128, the
    paper's 256); the evaluators that read the dialogue as chat history that; the model's own chat() where the study
    ran remote code; the GPT rows' unpublished messages; an option order other than the evaluator's."""
    import studies

    def listed(evaluator, policy):
        settings = {**modes.resolve_settings("generate", "en", {"preset": "dialogbench"}), "evaluator": evaluator}
        return [(d["setting"], d["why"]) for d in studies.protocol("generate", settings, policy)["differences"]]

    assert [s for s, _ in listed("default", "as_is")] == ["tokenizer", "human baseline", "reply limit"]
    assert [s for s, _ in listed("qwen", "gold_at_each_position")] == [
        "tokenizer", "human baseline", "reply limit", "chat history", "the model's chat", "Qwen's system prompt"]
    assert [s for s, _ in listed("baichuan", "gold_at_each_position")] == [
        "tokenizer", "human baseline", "reply limit", "chat history", "the model's chat"]
    assert [s for s, _ in listed("llama", "as_is")] == ["tokenizer", "human baseline", "reply limit", "chat history"]
    assert [s for s, _ in listed("api", "as_is")] == ["tokenizer", "human baseline", "reply limit",
                                                      "the GPT rows' requests"]
    assert listed("qwen", "as_is")[-1] == ("position policy", "set for this run")
    assert listed("default", "circular")[-1] == ("position policy", "set for this run")
    assert all("could not be read" not in why
               for e in ("default", "qwen", "llama", "api") for _, why in listed(e, None))
