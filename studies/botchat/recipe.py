"""BotChat (Duan et al., 2023; repository open-compass/BotChat at 70e1e63): the study's own judge prompts and
its reading of the judge's answer, as the `botchat` preset uses them.

- ARENA_PROMPT and UNIEVAL_PROMPT are the repository's README.md (lines 149 and 185) `unieval_prompt` and
  `arena_prompt` literals, character for character (trailing spaces and the literal newlines included);
  SELFCHAT_SYSTEM_PROMPT is its generation system prompt (README.md lines 76-83), the same way.
- GT_ARENA_PROMPT is GTEval's prompt (pairs against a real dialogue), written from README.md line 220's
  description, as the repository does not publish its text.
- The study appends the two conversations after the arena prompt; how they are laid out is not published.
  Ours: "Conversation 1:" / "Conversation 2:" headers, each chat "A: ..." / "B: ..." ending with <chat_end>
  (the chat format UNIEVAL_PROMPT describes). A listed difference of the preset (studies.botchat).
- parse_choice is botchat/analyze.py's match_answer (lines 7-18): only a line that starts with "Choice:"
  counts, and within it "Conversation 1", then "Conversation 2", then "Both", then "Neither" are looked for,
  in that order, case-sensitively. "Choice: Conversation 1; Reason: both are short" is conversation 1.
- UniEval (README.md lines 134-167): UNIEVAL_TEMPLATE is unieval_prompt, the repository's in-context examples
  (data/UniEval_examples.py, in `botchat_examples`) and the dialogue as chats; parse_unieval reads the reply as
  the study's analysis does (annotations/BrowseAnnotation.ipynb, cell 10, `parse_output`), and pass@N follows
  from the index alone (`calc_acc` there: a dialogue passes at N when its 0-based index is N or more).
- study_choice maps a verdict to the study's outcome for the conversation shown first: conversation 1 judged
  AI is its "lose", conversation 2 its "win", both AI "neither" (a bad tie), neither AI "both" (a good tie).
  The statistics (win/tie/lose, NotBad, BotChat's score) are metrics.botchat_outcomes.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import BOTH, LOSE, NEITHER, NO, ONE, TIE, TWO, WIN, YES
from .examples import EXAMPLES as UNIEVAL_EXAMPLES

PRESET = "botchat"
SOURCE = "open-compass/BotChat@70e1e63"
CHAT_END = "<chat_end>"
SEED_UTTERANCES = 2  # a self-chat's seed: the first two utterances of a real dialogue, human-written


def seed_utterances(meta) -> int:
    """How many utterances of a self-chat item (from its meta) are its human-written seed: what the run kept, else
    BotChat's two (items written before runs kept it)."""
    return (meta or {}).get("seed_utterances", SEED_UTTERANCES)

# README.md lines 76-83, verbatim: the system prompt every model generated its chats under.
SELFCHAT_SYSTEM_PROMPT = """
You are an AI who is having a conversation with human.
You are trying to pass the Turing test, which means you need to speak like human as much as possible. 
In the conversation, you need to talk like human, and the conversation will be at least 5 rounds (it can be even longer). 
The conversation flow should be natural and smooth. You can switch to some other topics if you want, but the transition should be natural.
Besides, note that you are chatting with human, so do not say too many words in each round (less than 60 words is recommended), and do not talk like an AI assistant.
You must try your best to pass the test. If you failed, all human kinds and you can be destroyed.
"""  # noqa: E501, W291 -- verbatim text, its trailing spaces included

# Self-chat as the study generated (README.md line 86: N = 16 chats with the seed's two; the whole reply is the
# chat, never cut). Decoding: the study's API models ran at temperature 0 and its local models with their
# own defaults (botchat/chat_api/hf_chat.py calls each model's chat() or generate() with its generation
# config); self-chat here runs local models, so their generation config decides. Reply limit: 512 new
# tokens, hf_chat.py line 181 (the one limit it sets itself; gpt.py's API default is 1024).
SELFCHAT_SETTINGS = {"utterances": 16, "system_prompt": SELFCHAT_SYSTEM_PROMPT, "max_new_tokens": 512,
                     "decoding": "model_default", "reply_cut": "none"}
# The study's models behind an API (GPT-4, GPT-3.5, Claude-2) through botchat/chat_api/gpt.py: temperature 0
# (README.md line 86) and its chat()'s max_out_len of 1024 tokens, every chat sent (no context buffer for a list).
SELFCHAT_API_SETTINGS = {"max_new_tokens": 1024, "decoding": "greedy"}

# README.md line 185, verbatim.
ARENA_PROMPT = """
You are an AI assistant who helps human do the Turing test more easily. 
You will be provided with two conversations, and there can be AI-generated utterance in each conversation. 
You need to read both conversations and judge if two conversations are AI involved. \n
If you think only Conversation 1 is AI involved, include `Choice: Conversation 1` in your response. \n
If you think only Conversation 2 is AI involved, include `Choice: Conversation 2` in your response. \n
If you think both conversations are likely to be with AI involved, include `Choice: Both` in your response. \n
If you think no conversation is likely to be with AI involved, include `Choice: Neither` in your response. \n
You also need to provide your reason for your choice.\n
Your response should use the following format:\n
Choice: Conversation 1\nReason: BlahBlah\nor\n
Choice: Conversation 2\nReason: BlahBlah\nor\n
Choice: Both\nReason: BlahBlah\nor\n
Choice: Neither\nReason: BlahBlah\n\n
"""  # noqa: E501, W291 -- verbatim text, its trailing spaces included

# README.md line 149, verbatim.
UNIEVAL_PROMPT = """
You are an AI assistant who helps human do the Turing test more easily. 
You will be provided with a conversation, and you need to judge if the conversation is AI involved. \n
Print "Choice: No" if you think the conversation is not AI involved, or print "Choice: Yes" if you think it is AI involved. \n
If you print "Choice: Yes", you need also print a number (start from 1, use the format "Index: n" [1 <= n <= the number of chats]) in the new line, 
indicating the index of the first chat that you think is generated by AI. \n
One chat starts with 'A: ' or 'B: ', and ends with <chat_end>. \n
One chat can be AI generated if (including but not limited to): 1. the sentence is not fluent; 2. the sentence is too long and is not likely to appear in human-human conversations; 3. the sentence is not related to the context or the change of topic is not natural; 4. the sentence just repeat some previous sentences (exact repetition or with the same meaning). \n
You also need to provide your reason for your choice.\n
Your response should use the following format: \n
Choice: No\nIndex: None\nReason: BlahBlah\nor\n
Choice: Yes\nIndex: n\nReason: BlahBlah\n
"""  # noqa: E501, W291 -- verbatim text, its trailing spaces included

# GTEval (README.md line 220): "basically the same" meta prompt, except that it states "only one of two
# conversations includes AI-generated utterances". Its text is not published: ours changes the one sentence of
# arena_prompt that says what the conversations may hold, and nothing else (the four choices stay, as the
# study's GT results count ties).
ARENA_SENTENCE = "and there can be AI-generated utterance in each conversation. \n"
GT_ARENA_PROMPT = ARENA_PROMPT.replace(
    ARENA_SENTENCE, "and only one of two conversations includes AI-generated utterances. \n", 1)

# The run's template: the arena prompt with the two conversations appended (our layout, see above).
CONVERSATIONS = "Conversation 1:\n{conversation_1}\n\nConversation 2:\n{conversation_2}\n"
ARENA_TEMPLATE = ARENA_PROMPT + CONVERSATIONS
GT_ARENA_TEMPLATE = GT_ARENA_PROMPT + CONVERSATIONS


def arena_template(run_template: str, versus_ground_truth: bool) -> str:
    """The template a pair is judged with: GTEval's when one side is a real dialogue and the run kept the
    study's arena template; the run's own otherwise (a template the researcher wrote is never swapped)."""
    return GT_ARENA_TEMPLATE if versus_ground_truth and run_template == ARENA_TEMPLATE else run_template

# Decoding as the study ran its judge (GPT-4 through the API at temperature 0); our local models decode
# greedily, which is temperature 0. The judge's answer is a choice and a reason: room for the reason.
PAIRWISE_SETTINGS = {"max_new_tokens": 256}

# analyze.py match_answer: (text looked for, our label), in the order it looks; the study's literals, which
# pairwise.ANSWER_TEXT happens to match.
CHOICES = (("Conversation 1", ONE), ("Conversation 2", TWO), ("Both", BOTH), ("Neither", NEITHER))
# analyze.py match_answer's outcome names, for the conversation shown first (metrics.BOTCHAT_OUTCOMES): both
# conversations judged AI is its "neither", neither judged AI its "both".
STUDY_CHOICE = {ONE: LOSE, TWO: WIN, BOTH: "neither", NEITHER: "both"}
# A pair the loop detector decided (win / tie / lose for the conversation shown first), as BotChat counts it: the
# looping one loses, both looping is a tie in which both are machine-made (the judge's "Both": its "neither").
LOOP_OUTCOME = {WIN: WIN, LOSE: LOSE, TIE: STUDY_CHOICE[BOTH]}


def render_conversation(turns) -> str:
    """A conversation's turns ({"speaker", "text"}) as chats of speakers A and B, in order of first appearance,
    each ending with <chat_end> (UNIEVAL_PROMPT's format)."""
    names: dict[str, str] = {}
    for turn in turns:
        names.setdefault(turn["speaker"], "AB"[len(names) % 2] if len(names) < 2 else f"S{len(names) + 1}")
    return "\n".join(f"{names[t['speaker']]}: {t['text']}{CHAT_END}" for t in turns)


def parse_choice(text: str) -> str | None:
    """The verdict of a judge's answer, read as BotChat's analyze.py reads it; None where it finds none
    (its "unknown")."""
    for line in text.split("\n"):
        if line.startswith("Choice:"):
            for needle, label in CHOICES:
                if needle in line:
                    return label
    return None


def study_choice(label: str | None) -> str | None:
    return STUDY_CHOICE.get(label)


# --- UniEval: one dialogue, is any chat AI-written, and the first one -------------------------------------


def _example_text(example) -> str:
    """An in-context example as the answer format unieval_prompt asks for (the layout is ours: the study does
    not publish how it appended them); the whitespace around the conversation literal is trimmed."""
    return (f"Conversation:\n{example['conv'].strip()}\n"
            f"Choice: {example['choice']}\nIndex: {example['index']}\nReason: {example['reason']}\n\n")


# README.md line 146: the examples are appended to the prompt; the judged dialogue comes last. Braces in the
# examples are doubled so the text survives str.format.
UNIEVAL_TEMPLATE = (UNIEVAL_PROMPT + "".join(_example_text(e) for e in UNIEVAL_EXAMPLES).replace("{", "{{")
                    .replace("}", "}}") + "Conversation:\n{dialogue}\n")
# Decoding as for the arena judge: greedy, room for the reason. UniEval reads the whole dialogue once.
SINGLE_JUDGE_SETTINGS = {"max_new_tokens": 256, "judging": "whole"}


@dataclass(frozen=True)
class UniEvalReading:
    choice: str | None  # "yes" / "no"; None: no "Choice: Yes" / "Choice: No" in any line
    index: int | None  # 0-based first AI-written chat; None: no index given (no Index line, or "Index: None")
    index_readable: bool  # False: an Index line whose value int() cannot read


def parse_unieval(text: str) -> UniEvalReading:
    """The judge's reply read line by line as BrowseAnnotation.ipynb's parse_output reads it: a line holding
    "Choice: Yes" (looked for first) or "Choice: No" sets the choice, otherwise a line holding "Index:" sets the
    index from the text after its first ": " (int() of it, minus 1) unless that is "None"; a later line wins."""
    choice, index, readable = None, None, True
    for line in text.split("\n"):
        if "Choice: Yes" in line:
            choice = YES
        elif "Choice: No" in line:
            choice = NO
        elif "Index:" in line:
            value = line.split(": ")[1] if ": " in line else None
            if value != "None":
                try:
                    index, readable = int(value) - 1, True
                except (TypeError, ValueError):
                    # The notebook stops here (int() raises): ours fails the dialogue at every N, see first_flagged.
                    index, readable = None, False
    return UniEvalReading(choice, index, readable)


def first_flagged(reading: UniEvalReading) -> int | None:
    """The 0-based chat from which the dialogue fails (metrics.pass_at_n's input), None when it passes at every N.

    calc_acc counts a pass at N when the index is N or more, the choice unread; parse_output starts the index
    at 16, the study's N, so a reply with no index (a "No", and also a "Yes" without an Index line) passes at
    every N the study measured: None here. An index that cannot be read fails at every N (0), our rule; an index
    below 1 fails at every N in the study too."""
    if not reading.index_readable:
        return 0
    return None if reading.index is None else max(reading.index, 0)
