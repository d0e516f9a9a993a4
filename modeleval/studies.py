"""Published studies as presets a researcher picks by name, and every place a run differs from them.

A study names its preset (the run setting `preset`), the modes it scores, the settings it published
per mode and the differences every run of the preset has (what cannot be done here as the study did
it, with why). `differences(mode, settings)` lists both: the standing ones and each published
setting the run changed. Runs carry the list (the runs page, the API) and reports name the preset
beside it. Django-free, so that the web process and the workers read the same list.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from studies import judgebench

from .modes import multiple_choice
from .scorers import botchat, dialogbench, diqad, huynh, kodialogbench
from .scorers.choice_rules import Rule
from .scorers.prompts import template_hash


@dataclass(frozen=True)
class Difference:
    setting: str
    published: str
    ours: str
    why: str

    def as_dict(self) -> dict:
        return {"setting": self.setting, "published": self.published, "ours": self.ours, "why": self.why}


@dataclass(frozen=True)
class ByBackend:
    """A published setting whose value the study chose by where the model ran: `local` for checkpoints run here,
    `api` for models behind an API (a run's settings name its `backend`)."""

    local: Any
    api: Any

    def of(self, settings: Mapping) -> Any:
        return self.api if settings.get("backend") == "api" else self.local


@dataclass(frozen=True)
class Study:
    preset: str  # the value of settings["preset"]
    title: str
    source: str  # paper and code the preset follows
    # mode -> {setting: published value}: a run that changes one is listed as differing there.
    published: Mapping[str, Mapping[str, Any]]
    # mode ("*" for every mode) -> differences every run of the preset has; "mode:key=value" -> those of the runs
    # whose setting `key` is `value`, "mode:key" -> those of the runs where `key` is set (truthy).
    standing: Mapping[str, tuple[Difference, ...]] = field(default_factory=dict)
    # (mode, settings) -> the option order the study scores in (a run field, not a setting), None where it has none.
    positions: Callable[[str, Mapping], str | None] | None = None

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.published)

    def differences(self, mode: str, settings: Mapping, position_policy: str | None = None) -> list[Difference]:
        found = [*self.standing.get("*", ())]
        # A run of dialogues the study released (settings "released") has the differences of reading them, not
        # those of a generation made here.
        if not settings.get("released"):
            found += self.standing.get(mode, ())
        for key, listed in self.standing.items():
            scope, _, condition = key.partition(":")
            name, has_value, value = condition.partition("=")
            if scope == mode and name and (str(settings.get(name)) == value if has_value else settings.get(name)):
                found += listed
        for key, value in self.published.get(mode, {}).items():
            if key not in settings:
                continue
            ours = settings[key]
            if isinstance(value, ByBackend):
                value = value.of(settings)
            if isinstance(value, Mapping) and isinstance(ours, Mapping):
                # Only the parts the study published: {"strategy", "k"} of a few-shot setting.
                ours = {part: ours.get(part) for part in value}
            if ours != value:
                found.append(Difference(key, _shown(value), _shown(ours), "set for this run"))
        published = self.positions(mode, settings) if self.positions and position_policy else None
        if published and position_policy != published:
            found.append(Difference("position policy", published, position_policy, "set for this run"))
        return found


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


STUDIES: dict[str, Study] = {}


def register(study: Study) -> Study:
    if study.preset in STUDIES:
        raise ValueError(f"a study already has the preset {study.preset!r}")
    STUDIES[study.preset] = study
    return study


def study_of(settings: Mapping | None) -> Study | None:
    return STUDIES.get((settings or {}).get("preset") or "")


def protocol(mode: str, settings: Mapping | None, position_policy: str | None = None) -> dict | None:
    """What a run or report shows of its study: the preset, its source and the differences (the run's option order
    among them where the study has one); None for a run of no study."""
    study = study_of(settings)
    if study is None:
        return None
    return {"preset": study.preset, "title": study.title, "source": study.source,
            "differences": [d.as_dict() for d in study.differences(mode, settings or {}, position_policy)]}


def dialogbench_positions(mode: str, settings: Mapping) -> str | None:
    """DialogBench's option order: its released Qwen and Baichuan evaluators ask with the answer at each position;
    its other evaluators and its perplexity scoring take the options as the data gives them."""
    return multiple_choice.default_position_policy(mode, {**settings, "preset": dialogbench.PRESET})


def presets_for(mode: str) -> list[dict]:
    """The studies a run of `mode` can follow, for the runs page."""
    return [{"preset": s.preset, "title": s.title} for s in STUDIES.values() if mode in s.modes]


# DialogBench's chat-model evaluators that read the dialogue as chat history (src/qwen.py, baichuan.py, chatglm.py,
# internlm.py, moss.py, kwaiyii.py and llama.py: the data's history / messages fields), not prompt_SFT.
_HISTORY = Difference("chat history", "src/<evaluator>.py: the dialogue as the chat's history turns (the data's "
                      "history / messages fields), the question and options as the last query",
                      "the prompt_SFT text (the dialogue, then the question and options) as one user message",
                      "the released data files hold prompt_SFT and prompt_pretrain only: their history and messages "
                      "fields are not in the repository")
_OWN_CHAT = Difference("the model's chat", "the model's own chat() from its remote code (trust_remote_code), its "
                       "generation config set to greedy, 128 new tokens", "the tokenizer's chat template (or the "
                       "model's registered chat_template), greedy, 128 new tokens",
                       "models load here from local files without running their remote code; a tokenizer without a "
                       "chat template asks the plain prompt: register the model with its template")

_QWEN_SYSTEM = Difference("Qwen's system prompt", "src/qwen.py calls the model's chat(), whose default system "
                          "prompt is \"You are a helpful assistant.\"", "the system message the tokenizer's chat "
                          "template adds by itself, if any (a run may set one with system=..., listed as set for the "
                          "run)", "chat() is remote code, never run here; the template is what the checkpoint ships")

register(Study(
    preset=dialogbench.PRESET,
    title="DialogBench (Ou et al., 2024)",
    positions=dialogbench_positions,
    source="kwai/DialogBench commit 239a5cc: config/prompt.json, src/utils.py, src/baseEval.py, src/evaluate.py and "
           "its evaluators (qwen.py, baichuan.py, llama.py, chat_template.py, ...); the paper, section 4",
    published={
        "loglikelihood": {"continuation": "text", "rule": Rule.PER_TOKEN},
        "generate": {"max_new_tokens": dialogbench.MAX_NEW_TOKENS, "system": ""},
    },
    standing={
        "generate": (
            Difference("reply limit", "128 new tokens in the released code (src/utils.py GEN_KWARGS); 256 in the "
                       "paper's text (section 4, Evaluation Method and Implementation Details)", "128 new tokens",
                       "the paper and its released code disagree; the preset follows the code whose prompts and "
                       "extraction it reproduces (a run may set max_new_tokens=256, listed as set for this run)"),
        ),
        **{f"generate:evaluator={name}": (_HISTORY, _OWN_CHAT)
           for name in dialogbench.EVALUATORS if name not in ("llama", "qwen")},
        "generate:evaluator=qwen": (_HISTORY, _OWN_CHAT, _QWEN_SYSTEM),
        "generate:evaluator=llama": (_HISTORY,),
        "generate:evaluator=api": (
            Difference("the GPT rows' requests", "ChatGPT and GPT-4 (gpt-3.5-turbo-0613, gpt-4-0314) through "
                       "OpenAI's API at temperature 0, presence_penalty 0.6, frequency_penalty 0 (paper, section 4); "
                       "their messages and reply limit not published",
                       "prompt_SFT as one user message, temperature 0, presence_penalty 0.6, frequency_penalty 0, "
                       "128 tokens", "the repository has no code for its GPT rows: the paper states their "
                       "parameters, not what was sent"),
        ),
        "*": (
            Difference("tokenizer", "the slow (Python) tokenizer: AutoTokenizer.from_pretrained(..., use_fast=False) "
                       "in src/baseEval.py", "the checkpoint's tokenizer as transformers loads it: the fast one where "
                       "the checkpoint has one, and always for a GGUF file",
                       "a GGUF file carries only what the fast tokenizer is built from; the two agree on almost every "
                       "text but may split some strings apart, which moves an option's log-likelihood"),
            Difference("human baseline", "3 experts on 50 items per task, an item right when 2 of 3 are",
                       "as many raters as the campaign has, on the items they answered",
                       "the paper's expert answers are not published; our annotators are counted the same way"),
        ),
    },
))

register(Study(
    preset=huynh.PRESET,
    title="LLMs as dialogue raters on FED (Huynh et al., 2023)",
    source="Huynh et al., Understanding the Effectiveness of Very Large Language Models on Dialog Evaluation "
           "(IWSDS 2023), sections 3-4, appendix B (Table 8, FED) and appendix C (Table 9, DSTC10); FED ratings "
           "(Mehri and Eskenazi, 2020)",
    published={
        "rating": {"fewshot": {"strategy": "random", "k": huynh.K}, "seeds": list(huynh.SEEDS), "top_k": 3,
                   "read": "probabilities"},
        "yes_no": {"fewshot": {"strategy": "random", "k": huynh.K_YES_NO}, "seeds": list(huynh.SEEDS)},
    },
    standing={
        "*": (
            Difference("examples of a drawn dialog's own items", "section 3.3: the same random examples for every "
                       "test point", "the same k for every item, except that an item of a drawn example's own "
                       "conversation takes the next example of the seed's order in its place",
                       "the paper does not say what those items were shown; their own example would show them "
                       "their rating"),
            Difference("example ratings", "one integer rating per example (Table 8: 1/2, 1/2, 2/2)",
                       "the mean of FED's raters rounded half up, which gives Table 8's three ratings",
                       "the paper does not say how FED's five ratings became one"),
        ),
        "rating": (
            Difference("the rated item's block", "Table 8 prints the task line and one example",
                       "after the examples, the rated item laid out as an example is (its turns, \"Response: ...\") "
                       "ending with \"Rating:\", under no header; one blank line between the task line, each "
                       "example and the rated item",
                       "the paper prints no rated item after its example, and its typeset table shows no blank "
                       "lines"),
            Difference("task line of each quality", "Table 8: \"rate how interesting the response is with regards "
                       "to the dialog history\"", "the same sentence with the quality's word; the overall quality "
                       "and the dialog-level qualities as huynh.TURN_WHAT and DIALOG_WHAT word them (after FED's "
                       "questions), \"Given a dialog, rate ...\" at dialog level",
                       "the paper prints the line for interestingness only"),
            Difference("rating weights", "section 3.1: w_i = p_i / sum p_j over the top 3 ratings, p_i called their "
                       "log probabilities", "p_i the ratings' probabilities, each summed over its spellings (\"1\", "
                       "\" 1\")", "a ratio of log probabilities would weigh the less likely rating more; the paper "
                       "does not say which tokens stand for a rating"),
            Difference("the rating kept", "Table 8's caption: the output truncated to the integer 0, 1 or 2",
                       "section 3.1's weighted rating (continuous) for the correlations, the likeliest rating "
                       "beside it as the answer", "the paper states both; its correlations are of section 3.1's"),
        ),
        "yes_no": (
            Difference("example answers", "Table 9: each example answered Yes or No",
                       "Yes when the raters' rounded mean is above the middle of the quality's scale, else No",
                       "the paper does not say how a rated example became Yes or No, and FED holds scale ratings"),
            Difference("yes and no", "p_model(yes) and p_model(no)",
                       "each summed over its spellings (yes, Yes, YES; with and without a leading space)",
                       "the paper does not say which tokens stand for yes and no; Table 9's answer is \"Yes\""),
            Difference("dialogue-level items and background", "Table 9 prints a context and a response, "
                       "\"Background info: none\"",
                       "a dialogue-level item (FED-Dial) without a Response line, asked \"Is the above conversation "
                       "a good conversation?\"; an item with knowledge or a persona shows it as its background",
                       "the paper prints neither a dialogue-level item nor an item with background"),
        ),
    },
))

register(Study(
    preset=diqad.PRESET,
    title="DiQAD (Zhao et al., 2023)",
    source="Zhao et al., DiQAD: A Benchmark Dataset for End-to-End Open-domain Dialogue Assessment (EMNLP 2023 "
           "Findings), section 5.1 and appendix C (the Chinese prompt); data: yukunZhao/"
           "Dataset_Dialogue_quality_evaluation",
    published={"rating": {"read": "generation", "system": ""}, "yes_no": {}},
    standing={
        "*": (
            Difference("test set", "a random 10,000-dialogue test split of DiQAD (section 5.1)",
                       "the run's items", "the split is not published: the released files hold the labelled "
                       "dialogues unsplit"),
        ),
        "rating": (
            Difference("the scored dialogue", "appendix C's {{dialogue}}, its layout not printed",
                       "the layout of the appendix's printed examples: \"[{\", each turn's 'role' and 'content' in "
                       "Python's quotes, \"}\" (the first speaker the user, the other the assistant)",
                       "the paper prints the examples, not how a dialogue fills {{dialogue}}"),
            Difference("the box around each dialogue", "appendix C sets each example's dialogue and {{dialogue}} "
                       "apart in a code box (the paper's text here marks it ```)",
                       "the dialogue alone as the user's message, without fences",
                       "the paper does not say that the box was part of the message rather than how the page sets a "
                       "quoted message; no fence is printed inside the examples' text"),
            Difference("reading the reply", "\"分数: N\" as the examples answer; the paper does not say how a reply "
                       "is read", "the last \"分数: N\" (either colon), else the reply's only number among 0-2, else "
                       "unreadable: wrong in Acc, UAR, Kappa, P, R and F1, left out of the correlations",
                       "the paper does not say"),
            Difference("decoding", "ChatGPT (gpt-3.5-turbo-0301) through the API and ChatGLM-6B, settings not "
                       "stated", f"greedy (temperature 0), at most {diqad.MAX_NEW_TOKENS} new tokens",
                       "the paper does not state them"),
            Difference("ChatGPT + CoT", "Table 3's chain-of-thought row", "not offered",
                       "its prompt is not published"),
        ),
        "yes_no": (
            Difference("verification question", "asked of annotators only (Figure 10), never of a model",
                       "an English prompt of ours (diqad.VERIFICATION_INSTRUCTION), examples from the items",
                       "the paper puts no such question to a model"),
        ),
    },
))

register(Study(
    preset=kodialogbench.PRESET,
    title="KoDialogBench (Jang et al., 2024)",
    source=f"Jang, Lee and Yu, KoDialogBench (LREC-COLING 2024), section 4.1.2 and appendix B; {kodialogbench.SOURCE}: "
           "kodialogbench/utils.py (doc_to_text_*), the task yaml files (each task's method; lm-eval multiple_choice, "
           "zero-shot, acc)",
    published={"loglikelihood": {"continuation": "text", "rule": Rule.ACC, "style": kodialogbench.BY_TASK}},
    standing={
        "*": (
            Difference("class descriptions", "each item's own option_description in the released data "
                       "(doc_to_text_direct_prompting_with_description)",
                       "the item's fields.option_description; an item without it lists the descriptions appendix "
                       "B.2 prints for K-TDD's four dialog acts, and any other class by its name alone",
                       "an item imported without the released data's option_description carries no other "
                       "description of its classes"),
            Difference("speaker numbers", "the released data's speaker ids, as the item's question uses them",
                       "the item's own numbers where its speakers are named by number (화자2, 2); speakers named "
                       "otherwise are numbered by first appearance",
                       "an item whose speakers carry no number has no other numbering for its question to use"),
            Difference("human figure", "3 native speakers on the same 50 items per set, the mean of their "
                       "accuracies", "the campaign's raters on the items they answered",
                       "the speakers' answers are not published"),
        ),
    },
))

register(Study(
    preset=botchat.PRESET,
    title="BotChat (Duan et al., 2023)",
    source=f"{botchat.SOURCE}: README.md (generation system prompt, arena_prompt, unieval_prompt), "
           "botchat/chat_api (hf_chat.py, gpt.py), botchat/analyze.py (match_answer, simple_count, calc_win_rate, "
           "analyze), data/UniEval_examples.py, annotations/BrowseAnnotation.ipynb (parse_output, calc_acc); the paper "
           "(sections 3.2 DupDetect, 4.1 and Appendix B)",
    published={
        "pairwise": {"fewshot": {"strategy": "none", "k": 0}},
        "selfchat": {**{key: value for key, value in botchat.SELFCHAT_SETTINGS.items() if key != "system_prompt"},
                     **{key: ByBackend(botchat.SELFCHAT_SETTINGS[key], value)
                        for key, value in botchat.SELFCHAT_API_SETTINGS.items()},
                     "system_prompt_sha256": template_hash(botchat.SELFCHAT_SYSTEM_PROMPT)},
        "single_judge": {"judging": "whole"},
    },
    standing={
        "single_judge": (
            Difference("layout of the examples and the dialogue", "data/UniEval_examples.py appended to "
                       "unieval_prompt (README.md line 146), the conversation after them (layout not published)",
                       "each example as \"Conversation:\" and its chats (whitespace around them trimmed), then its "
                       "\"Choice: / Index: / Reason:\" lines; the judged dialogue last, after \"Conversation:\", as "
                       "chats \"A: ...<chat_end>\"", "the repository publishes the prompt, the examples and the "
                       "reading of the answer, not the code that joins them"),
            Difference("an index that cannot be read", "annotations/BrowseAnnotation.ipynb parse_output: int() "
                       "of the text after \"Index: \" raises, the analysis stops",
                       "the dialogue fails at every N; counted among the unreadable replies",
                       "the study's analysis has no rule for it"),
            Difference("judge decoding", "GPT-4 through the API, temperature 0",
                       "the run's judge model, greedy (temperature 0); 256 new tokens",
                       "the judge is whichever model the researcher registers; the study does not state GPT-4's "
                       "reply limit"),
        ),
        "selfchat": (
            Difference("decoding", "temperature 0 for the models behind an API and for LLaMA-2 (paper section 4.1), "
                       "each other local model's own chat() or generate() defaults (botchat/chat_api/hf_chat.py)",
                       "models behind an API greedy (temperature 0); local models their own generation config "
                       "(greedy when it sets no sampling), draws seeded by the run's seed, LLaMA-2 included unless "
                       "the run sets decoding=greedy (then listed as set for this run)",
                       "the preset reads no model family from a checkpoint's files: a LLaMA-2 run sets greedy itself"),
            Difference("reply limit", "1024 tokens for the models behind an API (gpt.py chat, max_out_len); for local "
                       "models 512 new tokens where hf_chat.py sets a limit (line 181), the model's defaults elsewhere",
                       "1024 for a model behind an API, 512 new tokens for every local model",
                       "one limit for every local model: the one hf_chat.py sets"),
            Difference("context overflow", "local models: the oldest chats dropped until the system prompt, the chats "
                       "and a 192-token answer buffer fit the context (hf_chat.py lines 100, 131-142); API models: "
                       "every chat sent (gpt.py)", "local models: the oldest chats dropped until the prompt and the "
                       "reply limit fit the context; API models: every chat sent",
                       "the room kept for a local model's reply is the reply limit itself, so a reply never overflows"),
            Difference("duplicate detection", "DupDetect (paper section 3.2): utterance i against i+1 and i+2 for "
                       "2 < i < MaxRound - 1, a similarity above a pre-set threshold; the measure and the threshold "
                       "not published", "that window and the triggering utterance kept; loop_similarity (char_ratio: "
                       "normalised Indel similarity; or token_overlap) at least loop_threshold (0.9)",
                       "neither the paper nor the repository publishes the measure or the threshold"),
            Difference("token counts", "each generated chat's length in CL100K tokens, GPT-4's tokenizer "
                       "(README.md line 125; data/BrowseData.ipynb, tiktoken)",
                       "local models: tokens of the run model's tokenizer (settings.token_counter; item meta "
                       "utterance_tokens); models behind an API: the reply's completion tokens as the endpoint "
                       "reports them (CL100K for GPT-4 and GPT-3.5)", "CL100K's vocabulary is downloaded at first "
                       "use and cannot be fetched here; counts compare between runs of models sharing a tokenizer"),
        ),
        "selfchat:released": (
            Difference("duplicate detection", "DupDetect (paper section 3.2) on the dialogues compared; measure and "
                       "threshold not published", "our detector on the released dialogues: the window of section 3.2, "
                       "loop_similarity at least loop_threshold", "neither the paper nor the repository publishes the "
                       "measure, the threshold or which released dialogues DupDetect flagged"),
            Difference("token counts", "each chat's CL100K tokens (README.md line 125)", "not counted",
                       "CL100K's vocabulary is downloaded at first use and cannot be fetched here"),
        ),
        "pairwise": (
            Difference("GTEval prompt", "README.md line 220: arena_prompt \"basically the same\", stating that "
                       "only one of two conversations includes AI-generated utterances (its text not published)",
                       "botchat.GT_ARENA_PROMPT: arena_prompt with its second sentence alone changed to say so, for "
                       "pairs where one side is a real dialogue (item meta versus_ground_truth)",
                       "the repository publishes the description of the change, not its text"),
            Difference("layout of the two conversations", "appended after arena_prompt (layout not published)",
                       "\"Conversation 1:\" / \"Conversation 2:\" headers, chats as \"A: ...<chat_end>\"",
                       "the repository publishes the prompt and the parser, not the code that joins them"),
            Difference("judge decoding", "GPT-4 through the API, temperature 0",
                       "the run's judge model, greedy (temperature 0); 256 new tokens",
                       "the judge is whichever model the researcher registers; the study does not state GPT-4's "
                       "reply limit"),
            Difference("both orders", "each order of a pair is a result of its own (analyze.py counts every row)",
                       "each order is a result of its own in the BotChat, Elo and Bradley-Terry tables, pairs the "
                       "loop detector decided included, as the study counts them; the agreement tables compare one "
                       "verdict per pair (the orders combined, rule consistent)", "people label each pair once: a "
                       "combined verdict is what their label is compared with"),
            Difference("both dialogues looping", "a Tie (paper section 3.2), without saying which of analyze.py's "
                       "two ties", "a Neither (both machine-made: -1 each in the score, not NotBad)",
                       "the paper names no kind of tie; a looping dialogue is machine-made, as the judge's \"Both\" "
                       "says of both"),
            Difference("Win+Tie over the orders of showing", "analyze.py calc_win_rate adds up only the orders "
                       "(shown first; shown second) in which the first model won at least once (it walks the keys "
                       "of its win counter)", "every order of showing that was judged or decided by a loop",
                       "a counter walk that drops an order without a win is not described by the paper; it changes "
                       "only pairings where one model never won when shown first"),
            Difference("Elo order", "sequential Elo, init 1000, scale 400, K 32 (README.md line 204); the order of "
                       "the matches not published", "the order of the items' ids, with the mean and sd over 100 "
                       "seeded shuffles beside it, and Bradley-Terry, which has no order",
                       "the repository publishes neither the order nor its Elo code"),
        ),
    },
))

register(Study(
    preset=judgebench.PRESET,
    title=judgebench.TITLE,
    source=judgebench.SOURCE,
    published={"judge": {"max_new_tokens": judgebench.MAX_NEW_TOKENS, "system": ""}},
    standing={"judge": tuple(Difference(**d) for d in judgebench.differences()),
              "judge:backend=local": tuple(Difference(**d) for d in judgebench.differences("local")),
              "judge:backend=api": tuple(Difference(**d) for d in judgebench.differences("api"))},
))
