"""BotChat (Duan et al., 2023): self-chats continued from real seeds, judged one by one (UniEval) and in
pairs (the arena), `recipe` and its examples; its Tables 1-5 (`paper.json`).
"""
from ..study import ByBackend, Difference, Study
from ..text import template_hash
from . import recipe as botchat
from .modes import RECIPES

STUDY = Study(
    recipes=RECIPES,
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
)
