"""Prompt templates as plain `str.format` strings, and the renderers for their fields.

A run stores the template text and its `template_hash`, so a figure can always be
traced to the exact prompt that produced it. Literal braces in a template must be
doubled; field values may hold anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from studies.text import chat_messages as chat_messages
from studies.text import prompt_text as prompt_text
from studies.text import render_dialogue as render_dialogue
from studies.text import template_hash as template_hash

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def with_system(system: str | None, messages: Sequence[Mapping]) -> list:
    """Chat messages after a system message holding `system`, when there is one."""
    return ([{"role": "system", "content": system}] if system else []) + list(messages)


def has_chat_template(tokenizer) -> bool:
    """Whether the tokenizer brings a chat template of its own."""
    return bool(getattr(tokenizer, "chat_template", None))


def render_chat(tokenizer, messages: Sequence[Mapping], chat_template: str | None = None) -> str:
    """Chat messages as the model reads them: rendered as text by `chat_template`, else by the tokenizer's own,
    ending where the assistant's reply starts."""
    return tokenizer.apply_chat_template(messages, chat_template=chat_template, tokenize=False,
                                         add_generation_prompt=True)


def render_options(options: Mapping[str, str] | Sequence[str]) -> str:
    """"A. text" per line; a sequence is lettered in order, a mapping keeps its keys."""
    pairs = options.items() if isinstance(options, Mapping) else zip(LETTERS, options, strict=False)
    return "\n".join(f"{letter}. {text}" for letter, text in pairs)


# DialogBench, base models: each option text is the continuation scored after this
# prompt (with a " " delimiter), so the prompt ends where the answer begins.
MC_LOGLIK_EN = "{instruction}\n\nDialogue:\n{dialogue}\n\nQuestion: {question}\nAnswer:"
MC_LOGLIK_ZH = "{instruction}\n\n对话：\n{dialogue}\n\n问题：{question}\n答案："

# DialogBench, chat models: the options are shown and a letter is asked for.
MC_GENERATE_EN = (
    "{instruction}\n\nDialogue:\n{dialogue}\n\nQuestion: {question}\n{options}\n\n"
    "Answer with the letter of the correct option only."
)
MC_GENERATE_ZH = "{instruction}\n\n对话：\n{dialogue}\n\n问题：{question}\n{options}\n\n请只回答正确选项的字母。"

# Huynh et al.: one shot per example, the query last with an empty answer, so the
# next token is the rating (or yes/no).
RATING_INSTRUCTION = (
    "Rate the {quality} of the response to the dialogue on a scale from {low} to {high}."
)
RATING_SHOT = "Dialogue:\n{context}\nResponse: {response}\n{quality} score:{answer}"
YES_NO_INSTRUCTION = "Answer yes or no."
YES_NO_SHOT = "Dialogue:\n{context}\nResponse: {response}\nIs the response {quality}?{answer}"
SHOT_SEPARATOR = "\n\n"

# BotChat arena: the answer names the conversation judged to involve an AI.
PAIRWISE_AI_JUDGE = (
    "Below are two conversations. Each may be between two humans, or may include "
    "utterances written by an AI.\n\n"
    "Conversation 1:\n{conversation_1}\n\n"
    "Conversation 2:\n{conversation_2}\n\n"
    "Which conversation involves an AI? Answer with exactly one of: "
    "Conversation 1, Conversation 2, Both, Neither.\nAnswer:"
)

# BotChat single-dialogue judgement: the utterances are numbered so that the answer can name one.
SINGLE_AI_JUDGE = (
    "Below is a conversation. It may be between two humans, or some utterances may have been "
    "written by an AI.\n\n"
    "{dialogue}\n\n"
    "Is any utterance written by an AI? Answer \"No\", or \"Yes\" followed by the number of the "
    "first utterance written by an AI (for example \"Yes, 3\").\nAnswer:"
)
