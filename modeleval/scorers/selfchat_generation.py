"""BotChat self-chat: one model writes both sides of a dialogue on from a human chat seed.

Each side sees the dialogue through the chat template as a conversation of its own: its own
turns as "assistant", the other side's as "user", so the last turn shown is always the other
side's and the reply is the next utterance. By default decoding is greedy and a reply is cut at its
first newline (a model that runs on writes the other side too); a study's preset may decode with the
model's own generation config and keep the whole reply (BotChat: `studies.botchat.recipe.SELFCHAT_SETTINGS`).
When the prompt and the reply would overflow the context, the oldest turns go first; the system
prompt always stays.

Every step of every seed is generated in one batch, and the exact prompt text of each utterance
is kept, so any utterance can be traced (and `render_prompt` reproduces it from the dialogue).

A model behind an API (`self_chat_api`) is asked the same conversations as role / content turns, its server
applying the chat template: greedy (temperature 0), the whole conversation each time (BotChat's gpt.py sends
every chat and drops none), each utterance's tokens as the server counts the reply.

torch is imported by `self_chat` only: the web process reads the settings and constants here to queue a
run without loading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .prompts import has_chat_template, render_chat, with_system

DEFAULT_SYSTEM_PROMPT = (
    "You are chatting with another person. Reply with one short, natural utterance, as people talk "
    "in everyday conversation. Do not mention that you are an AI, and do not write the other person's lines."
)
DEFAULT_UTTERANCES = 16
DEFAULT_MAX_NEW_TOKENS = 24
DEFAULT_DECODING = "greedy"
# first_line: the reply up to its first newline; none: the whole reply, stripped (BotChat's gpt.py line 70).
REPLY_CUTS = ("first_line", "none")
DEFAULT_REPLY_CUT = "first_line"
SPEAKERS = ("A", "B")  # utterance i is said by SPEAKERS[i % 2]


@dataclass
class Step:
    index: int  # of the utterance in the dialogue
    prompt: str  # the exact text the model read
    dropped: int  # oldest turns left out so the prompt fits
    reply: str  # the decoded continuation, before the cut
    text: str  # the utterance kept


@dataclass
class SelfChat:
    utterances: list[str]  # the seed, then the generated turns
    seed_length: int
    steps: list[Step] = field(default_factory=list)


def messages(dialogue: Sequence[str], system: str = "", dropped: int = 0) -> list[dict]:
    """The dialogue as the side that speaks next sees it, without its `dropped` oldest turns."""
    speaker = len(dialogue) % 2
    turns = [{"role": "assistant" if i % 2 == speaker else "user", "content": text}
             for i, text in enumerate(dialogue) if i >= dropped]
    return with_system(system, turns)


def _render(tokenizer, dialogue, system, dropped, chat_template, use_chat):
    if use_chat:
        return render_chat(tokenizer, messages(dialogue, system, dropped), chat_template)
    # Without a chat template: labelled lines, ending on the label of the speaker to come.
    lines = [f"{SPEAKERS[i % 2]}: {text}" for i, text in enumerate(dialogue) if i >= dropped]
    return "\n".join(([system, ""] if system else []) + lines + [f"{SPEAKERS[len(dialogue) % 2]}:"])


def render_prompt(tokenizer, dialogue: Sequence[str], *, system: str = "", max_prompt_tokens: int | None = None,
                  chat_template: str | None = None, use_chat: bool | None = None) -> tuple[str, int]:
    """(prompt, turns dropped) for the utterance after `dialogue`: the oldest turns are left out
    until the prompt is at most `max_prompt_tokens` long; the last turn is always kept."""
    if use_chat is None:
        use_chat = bool(chat_template) or has_chat_template(tokenizer)
    for dropped in range(max(len(dialogue), 1)):
        text = _render(tokenizer, dialogue, system, dropped, chat_template, use_chat)
        if max_prompt_tokens is None or len(tokenizer.encode(text, add_special_tokens=False)) <= max_prompt_tokens:
            break
    return text, dropped


def first_line(reply: str) -> str:
    return reply.strip().split("\n", 1)[0].strip()


def cut_reply(reply: str, cut: str) -> str:
    if cut not in REPLY_CUTS:
        raise ValueError(f"reply cut must be one of {REPLY_CUTS}, not {cut!r}")
    return first_line(reply) if cut == "first_line" else reply.strip()


def token_counts(tokenizer, utterances: Sequence[str]) -> list[int]:
    """Tokens of each utterance alone, without special tokens (BotChat counts each chat's tokens)."""
    return [len(tokenizer.encode(text, add_special_tokens=False)) for text in utterances]


def self_chat(model, tokenizer, seeds: Sequence[Sequence[str]], *, utterances: int = DEFAULT_UTTERANCES,
              system: str = DEFAULT_SYSTEM_PROMPT, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
              max_length: int | None = None, chat_template: str | None = None, use_chat: bool | None = None,
              batch_size: int = 32, decoding: str = DEFAULT_DECODING, reply_cut: str = DEFAULT_REPLY_CUT,
              sampling_seed: int = 0, on_step=None) -> list[SelfChat]:
    """Continue every seed to `utterances` utterances in all (seeds already that long are kept as
    they are). `max_length` is the context in tokens; a prompt gets what the reply leaves of it.
    `sampling_seed` fixes the draws of a model whose own generation config samples. `on_step(n)` is
    called after the n-th step (one utterance more for every dialogue still short), e.g. to show progress."""
    import torch

    from .generation import generate

    torch.manual_seed(sampling_seed)
    chats = [SelfChat(list(seed), len(seed)) for seed in seeds]
    budget = max_length - max_new_tokens if max_length else None
    step = 0
    while todo := [chat for chat in chats if len(chat.utterances) < utterances]:
        rendered = [render_prompt(tokenizer, chat.utterances, system=system, max_prompt_tokens=budget,
                                  chat_template=chat_template, use_chat=use_chat) for chat in todo]
        replies = generate(model, tokenizer, [prompt for prompt, _ in rendered], max_new_tokens=max_new_tokens,
                           chat=False, batch_size=batch_size, decoding=decoding)
        for chat, (prompt, dropped), reply in zip(todo, rendered, replies, strict=True):
            text = cut_reply(reply, reply_cut)
            chat.steps.append(Step(len(chat.utterances), prompt, dropped, reply, text))
            chat.utterances.append(text)
        step += 1
        if on_step:
            on_step(step)
    return chats


def self_chat_api(converse, seeds: Sequence[Sequence[str]], *, utterances: int = DEFAULT_UTTERANCES,
                  system: str = DEFAULT_SYSTEM_PROMPT, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                  reply_cut: str = DEFAULT_REPLY_CUT, on_step=None) -> tuple[list[SelfChat], list[list[int | None]]]:
    """`self_chat` through a model behind an API: `converse(conversations, max_new_tokens=...)` answers each
    conversation (`messages` of the dialogue so far) with (the request as text, the reply, its completion tokens),
    as `apiscoring.ApiModel.converse`. Returns the dialogues and each utterance's token count (None for the seed's,
    which no server counted)."""
    chats = [SelfChat(list(seed), len(seed)) for seed in seeds]
    tokens = [[None] * len(seed) for seed in seeds]
    step = 0
    while todo := [n for n, chat in enumerate(chats) if len(chat.utterances) < utterances]:
        answers = converse([messages(chats[n].utterances, system) for n in todo], max_new_tokens=max_new_tokens)
        for n, (prompt, reply, completion_tokens) in zip(todo, answers, strict=True):
            chat = chats[n]
            text = cut_reply(reply, reply_cut)
            chat.steps.append(Step(len(chat.utterances), prompt, 0, reply, text))
            chat.utterances.append(text)
            tokens[n].append(completion_tokens)
        step += 1
        if on_step:
            on_step(step)
    return chats, tokens
