"""BotChat's recipes: the arena's judge (pairwise: its arena_prompt, its layout of the two conversations, its
reading of the Choice line; each order of showing a result of its own), UniEval (single_judge: its prompt with
its examples, the whole dialogue asked once), and the self-chats (its system prompt, reply limits and arena)."""
from __future__ import annotations

import studies.botchat.recipe as botchat

from ..recipes import Judge, SelfChat


class Arena(Judge):
    settings = botchat.PAIRWISE_SETTINGS
    template = ("botchat-arena-en/1", botchat.ARENA_TEMPLATE)
    counts_each_order = True
    render = staticmethod(botchat.render_conversation)
    parse = staticmethod(botchat.parse_choice)

    def arena_template(self, template: str, versus_ground_truth: bool) -> str:
        return botchat.arena_template(template, versus_ground_truth)


def unieval_verdict(reply: str) -> dict:
    """What the judge said, as annotations/BrowseAnnotation.ipynb reads it: its choice, the 0-based index it
    names, whether that reading is whole, and the first chat the dialogue fails from."""
    reading = botchat.parse_unieval(reply)
    return {"parsed": reading.choice, "index": reading.index,
            "readable": reading.choice is not None and reading.index_readable,
            "first_flagged": botchat.first_flagged(reading)}


class UniEval(Judge):
    settings = botchat.SINGLE_JUDGE_SETTINGS
    template = ("botchat-unieval-en/1", botchat.UNIEVAL_TEMPLATE)
    render = staticmethod(botchat.render_conversation)
    parse = staticmethod(unieval_verdict)


class SelfChats(SelfChat):
    settings = botchat.SELFCHAT_SETTINGS
    api_settings = botchat.SELFCHAT_API_SETTINGS
    prompt_version = "botchat-selfchat-system-en/1"
    # Its arena: the seeds of MuTual-Test whose real dialogue has 4 chats or more (222 of them).
    arena_min_utterances = 4


RECIPES = {"pairwise": Arena(), "single_judge": UniEval(), "selfchat": SelfChats()}
