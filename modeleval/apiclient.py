"""Models behind an OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, TGI, llama.cpp's server):
requests with retries, and the probe of what an endpoint can serve correctly.

Django-free and torch-free. The key is read from the environment variable the spec names at the
moment of each request, sent in the Authorization header only, and never returned, stored or
logged: requests are recorded by their JSON body alone.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import httpcore
import httpx

from .scorers.prompts import chat_messages, with_system

# Worth asking again: rate limited, or the server (or a proxy in front of it) failed or is restarting.
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
CHAT = "/chat/completions"
COMPLETIONS = "/completions"

# Capabilities a probe checks, and the modes that need each one.
CAPABILITIES = ("chat", "completions", "top_logprobs", "prompt_logprobs")
PROBE_PROMPT = "The capital of France is"
PROBE_TEXT = "The capital of France is Paris"
PROBE_TOLERANCE = 0.1  # nats per token between the endpoint's prompt log-probabilities and a reference
# A prompt that starts as the probe's does, scored between two askings of the probe's own: a server that caches
# prefixes (vLLM's prefix caching, SGLang's radix cache, llama.cpp's prompt cache) must answer the second asking
# as the first. Stale cached figures are off by far more than this; a kernel's rounding on a shorter batch is not.
PROBE_SHARED_START = ". The capital of Italy is"
CACHE_TOLERANCE = 0.01  # nats between the two askings of one prompt
TOP_LOGPROBS = 20  # OpenAI's maximum for chat; completions servers differ (llama.cpp takes more, OpenAI 5)


# Kinds of failure. An answer's own text is never repeated in an error: whatever answered at an address (a
# database, a broker, this application) must not be readable through a model's errors, and a connection
# refused, a timeout, an HTTP error and an answer of another shape are one kind, so that an error does not
# tell an open port from a closed one.
NO_ANSWER = "no_answer"
KEY_MISSING = "key_missing"
UNSUPPORTED = "unsupported"
WRONG_FIGURES = "wrong_figures"
KINDS = {
    NO_ANSWER: "no OpenAI-compatible answer (the endpoint could not be reached, refused, timed out, or answered "
               "with an error or in another shape)",
    KEY_MISSING: "the environment variable {key_env} (this model's key) is not set",
    UNSUPPORTED: "the answer lacks the fields this needs",
}


class ApiError(Exception):
    """The endpoint did not answer usefully; `retryable` when asking again later may help. `kind` is one of
    the kinds above; the message adds where and, for a model's own wrong figures, which figures."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = True, kind: str = NO_ANSWER):
        self.status, self.retryable, self.kind = status, retryable, kind
        super().__init__(message)

    @property
    def reason(self) -> str:
        """What a probe stores and shows: the kind's words, or the figures that were wrong."""
        return str(self) if self.kind in (WRONG_FIGURES, UNSUPPORTED) else f"{self.kind}: {KINDS[self.kind]}"


def request_key(endpoint: str, path: str, body: Mapping) -> str:
    """The cache key of one exact request: endpoint, path and canonical JSON body (never the key)."""
    canonical = json.dumps({"endpoint": endpoint.rstrip("/"), "path": path, "body": body}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class PinnedBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting to the addresses `resolve(host, port)` returns (the ones the
    operator's rules were checked on, resolved once) instead of resolving the name again: a name that answers a
    public address to the check and a loopback one to the connection (DNS rebinding) reaches nothing else. TLS
    still names and verifies the host (SNI, certificate) and the Host header is the URL's: only the socket's
    address is chosen here. A refusal by `resolve` is a connection error."""

    def __init__(self, resolve: Callable[[str, int], Sequence[str]]):
        self.resolve = resolve

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            addresses = list(self.resolve(host, port))
        except Exception as error:  # noqa: BLE001 - the rule's refusal, told as a connection that did not happen
            raise httpcore.ConnectError(f"{host}: refused by the endpoint rules") from error
        last = httpcore.ConnectError(f"{host}: no address")
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                last = error
        raise last


@dataclass
class Endpoint:
    base_url: str
    model: str
    key_env: str = ""
    timeout: float = 120.0
    max_retries: int = 4
    backoff_s: float = 0.5  # first wait; doubled at each retry, with jitter, capped at max_backoff_s
    max_backoff_s: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    # (host, port) -> the addresses a connection may use (checked), or an exception; None: the system resolver.
    resolve: Callable[[str, int], Sequence[str]] | None = None

    def client(self, **options) -> httpx.Client:
        """An HTTP client for this endpoint: connections go to the addresses `resolve` checked, and no proxy from
        the environment stands between (a proxy would resolve the name again itself)."""
        transport = httpx.HTTPTransport(limits=options.pop("limits", httpx.Limits()))
        if self.resolve is not None:
            transport._pool._network_backend = PinnedBackend(self.resolve)  # httpx names no door for it
        return httpx.Client(timeout=self.timeout, transport=transport, trust_env=False, **options)

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.key_env:
            key = os.environ.get(self.key_env)
            if not key:
                raise ApiError(KINDS[KEY_MISSING].format(key_env=self.key_env), retryable=False, kind=KEY_MISSING)
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def wait_s(self, attempt: int, retry_after: str | None = None) -> float:
        if retry_after:
            try:
                return min(self.max_backoff_s, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return min(self.max_backoff_s, self.backoff_s * 2 ** attempt) * (0.5 + random.random() / 2)

    def post(self, path: str, body: Mapping, client: httpx.Client | None = None) -> dict:
        """The JSON answer to one request, retried with backoff on connection errors, 429 and 5xx.
        Other 4xx answers are refused at once (asking again would get the same answer)."""
        last = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.sleep(self.wait_s(attempt - 1, getattr(last, "retry_after", None)))
            try:
                if client is None:
                    with self.client() as own:
                        response = own.post(self.url(path), json=body, headers=self._headers())
                else:
                    response = client.post(self.url(path), json=body, headers=self._headers())
            except httpx.TransportError as error:
                last = ApiError(f"{self.url(path)}: {type(error).__name__}")
                continue
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError:
                    last = ApiError(f"{self.url(path)}: the answer is not JSON")
                    continue
            error = ApiError(f"{self.url(path)}: HTTP {response.status_code}", status=response.status_code,
                             retryable=response.status_code in RETRY_STATUS)
            if not error.retryable:
                raise error
            error.retry_after = response.headers.get("retry-after")
            last = error
        raise ApiError(f"gave up after {self.max_retries + 1} attempts: {last}", status=getattr(last, "status", None))


# --- request bodies and answers ------------------------------------------------------------


def chat_body(model: str, user, *, system: str = "", max_tokens: int = 16, **extra) -> dict:
    """`user`: one user message's text, or a chat of (role, content) pairs ending with the user's turn."""
    messages = with_system(system, chat_messages(user))
    return messages_body(model, messages, max_tokens=max_tokens, **extra)


def messages_body(model: str, messages: Sequence[Mapping], *, max_tokens: int = 16, **extra) -> dict:
    """A chat request of whole conversation (system, user and assistant turns), greedy (temperature 0)."""
    return {"model": model, "messages": [dict(m) for m in messages], "max_tokens": max_tokens, "temperature": 0,
            **extra}


def completion_body(model: str, prompt: str, *, max_tokens: int = 1, **extra) -> dict:
    return {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, **extra}


def chat_text(response: Mapping) -> str:
    try:
        return response["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise ApiError("no message in the chat answer", retryable=False) from None


def completion_text(response: Mapping) -> str:
    try:
        return response["choices"][0]["text"] or ""
    except (KeyError, IndexError, TypeError):
        raise ApiError("no text in the completion answer", retryable=False) from None


def next_token_logprobs(response: Mapping) -> dict[str, float]:
    """The top log-probabilities of the first generated token of a completion answer (OpenAI's
    legacy `logprobs` shape: `top_logprobs` a list of {token: logprob})."""
    try:
        top = response["choices"][0]["logprobs"]["top_logprobs"][0]
    except (KeyError, IndexError, TypeError):
        top = None
    if not isinstance(top, dict) or not top:
        raise ApiError("the completion answer holds no top_logprobs", retryable=False, kind=UNSUPPORTED)
    return {str(token): float(lp) for token, lp in top.items()}


def usage(response: Mapping) -> dict:
    got = response.get("usage") or {}
    return {"prompt_tokens": int(got.get("prompt_tokens") or 0),
            "completion_tokens": int(got.get("completion_tokens") or 0)}


def word_probs_from_top(top: Mapping[str, float], words: Sequence[str], spellings=("{}", " {}"),
                        follow: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, float]:
    """Each word's probability as the next text, summed over its spellings, read from the top
    log-probabilities; a spelling the tokenizer splits into a whitespace token and the word ("
    3" -> " ", "3") is read as p(" ") * p("3" | " ") from `follow[" "]`, the top log-probabilities
    after the prompt and that whitespace. Words outside the top list count as 0."""
    follow = follow or {}
    row = dict.fromkeys(words, 0.0)
    for word in words:
        for spelling in spellings:
            text = spelling.format(word)
            if text in top:
                row[word] += math.exp(top[text])
                continue
            for prefix, after in follow.items():
                if text.startswith(prefix) and text[len(prefix):] in after:
                    row[word] += math.exp(top[prefix] + after[text[len(prefix):]])
    return row


def whitespace_tokens(top: Mapping[str, float]) -> list[str]:
    """Top tokens that are whitespace only: the prefixes worth following one token further."""
    return [token for token in top if token and not token.strip()]


# --- the probe ---------------------------------------------------------------------------


def _check(capabilities, name, test):
    try:
        capabilities[name] = {"ok": True, **(test() or {})}
    except ApiError as error:
        capabilities[name] = {"ok": False, "kind": error.kind, "reason": error.reason}
    except (KeyError, IndexError, TypeError, ValueError):
        capabilities[name] = {"ok": False, "kind": UNSUPPORTED, "reason": f"{UNSUPPORTED}: {KINDS[UNSUPPORTED]}"}


def echo_logprobs(endpoint: Endpoint, text: str, client=None) -> list[tuple[str, float | None]]:
    """(token, log-probability) of each prompt token as the endpoint reports them (echo)."""
    answer = endpoint.post(COMPLETIONS, completion_body(endpoint.model, text, max_tokens=1, echo=True, logprobs=1),
                           client)
    logprobs = answer["choices"][0]["logprobs"]
    tokens, values, offsets = logprobs["tokens"], logprobs["token_logprobs"], logprobs.get("text_offset")
    if offsets is not None:  # keep the prompt's tokens only (the generated one comes after)
        pairs = [(t, v) for t, v, o in zip(tokens, values, offsets, strict=False) if o < len(text)]
    else:
        pairs = list(zip(tokens, values, strict=False))[:-1]
    if not pairs or all(v is None for _, v in pairs):
        raise ApiError("echo returned no prompt log-probabilities", retryable=False, kind=UNSUPPORTED)
    return [(str(t), None if v is None else float(v)) for t, v in pairs]


def same_after_shared_start(prompt: str, first: Mapping, figures_of: Callable[[str], Mapping]) -> dict:
    """Ask `figures_of` for a prompt that shares `prompt`'s start, then for `prompt` again, and refuse (an
    ApiError) when the second asking's figures differ from `first` by more than CACHE_TOLERANCE: a server whose
    prefix cache hands back stale log-probabilities gives the answers of another prompt. `first` and the answers
    map a token (or a position) to a log-probability; the keys both hold are compared (None for none)."""
    figures_of(prompt + PROBE_SHARED_START)
    again = figures_of(prompt)
    shared = [key for key in first if key in again and first[key] is not None and again[key] is not None]
    if not shared or max(first, key=lambda k: first[k] if first[k] is not None else -math.inf) != max(
            again, key=lambda k: again[k] if again[k] is not None else -math.inf):
        raise ApiError(f"{prompt!r} asked again after {prompt + PROBE_SHARED_START!r} gets other answers: the "
                       f"server's prefix cache returns stale log-probabilities (turn it off or fix the server)",
                       retryable=False, kind=WRONG_FIGURES)
    worst = max(abs(first[key] - again[key]) for key in shared)
    if worst > CACHE_TOLERANCE:
        raise ApiError(f"{prompt!r} asked again after {prompt + PROBE_SHARED_START!r} gets log-probabilities "
                       f"{worst:.4f} away from the first asking's (more than {CACHE_TOLERANCE}): the server's prefix "
                       f"cache returns stale figures (turn it off or fix the server)", retryable=False,
                       kind=WRONG_FIGURES)
    return {"compared": len(shared), "max_difference": worst}


def probe(endpoint: Endpoint, reference: Sequence[tuple[str, float]] | None = None,
          tolerance: float = PROBE_TOLERANCE) -> dict:
    """What the endpoint serves, each {ok, reason}: chat, completions, top_logprobs (of the next
    token, for rating and yes/no), prompt_logprobs (echo, for log-likelihood modes). Prompt
    log-probabilities are trusted only when they agree, token by token within `tolerance`, with
    the log-probabilities the same endpoint gives the same token when generating it, and with
    `reference` ((token, logprob) of PROBE_TEXT computed in-process from the same weights) when
    one is given."""
    capabilities: dict = {}
    with endpoint.client() as client:
        _check(capabilities, "chat", lambda: {"sample": chat_text(endpoint.post(
            CHAT, chat_body(endpoint.model, "Say OK.", max_tokens=4), client))})
        _check(capabilities, "completions", lambda: {"sample": completion_text(endpoint.post(
            COMPLETIONS, completion_body(endpoint.model, PROBE_PROMPT, max_tokens=2), client))})
        top: dict = {}

        def top_logprobs():
            top.update(next_token_logprobs(endpoint.post(
                COMPLETIONS, completion_body(endpoint.model, PROBE_PROMPT, logprobs=TOP_LOGPROBS), client)))
            if len(top) < 2:
                raise ApiError(f"asked for {TOP_LOGPROBS} top log-probabilities, got {len(top)}", retryable=False,
                               kind=WRONG_FIGURES)
            found = {"n": len(top)}
            found["prefix_cache"] = same_after_shared_start(
                PROBE_PROMPT, top, lambda prompt: next_token_logprobs(endpoint.post(
                    COMPLETIONS, completion_body(endpoint.model, prompt, logprobs=TOP_LOGPROBS), client)))
            return found

        _check(capabilities, "top_logprobs", top_logprobs)

        def prompt_logprobs():
            pairs = echo_logprobs(endpoint, PROBE_TEXT, client)
            figures = evidence
            figures.update(tokens=[t for t, _ in pairs], logprobs=[v for _, v in pairs])
            if reference is not None:
                figures["reference"] = [v for _, v in reference]
                # Compared from the end: an endpoint may show a begin-of-text token first.
                n = len(reference) - 1
                mine, theirs = pairs[-n:], reference[1:]
                if len(pairs) < n or [t for t, _ in mine] != [t for t, _ in theirs] or any(v is None for _, v in mine):
                    raise ApiError(f"the endpoint splits {PROBE_TEXT!r} into {len(pairs)} tokens other than the "
                                   f"reference's {len(reference)}", retryable=False, kind=WRONG_FIGURES)
                worst = max(abs(a - b) for (_, a), (_, b) in zip(mine, theirs, strict=True))
                figures["max_difference"] = worst
                if worst > tolerance:
                    got = ", ".join(f"{v:.2f}" for _, v in mine)
                    expected = ", ".join(f"{v:.2f}" for _, v in theirs)
                    raise ApiError(f"prompt log-probabilities of {PROBE_TEXT!r} are wrong: the endpoint gives "
                                   f"{got} where the same weights in-process give {expected} (largest difference "
                                   f"{worst:.2f} > {tolerance})", retryable=False, kind=WRONG_FIGURES)
            # Then the endpoint against itself: the last prompt token's echo figure and the figure the same
            # endpoint gives that token as the next token after the rest of the prompt.
            last_token, last = pairs[-1]
            if top and last_token in top:
                figures["self_check"] = {"token": last_token, "echo": last, "generated": top[last_token]}
                if last is None or abs(last - top[last_token]) > tolerance:
                    raise ApiError(f"the echo log-probability of the prompt's last token ({last}) differs from "
                                   f"the one the endpoint gives it as next token ({top[last_token]:.4f}) by more "
                                   f"than {tolerance}", retryable=False, kind=WRONG_FIGURES)
            figures["prefix_cache"] = same_after_shared_start(
                PROBE_TEXT, dict(enumerate(v for _, v in pairs)),
                lambda text: dict(enumerate(v for _, v in echo_logprobs(endpoint, text, client))))
            if reference is None and "self_check" not in figures:
                raise ApiError("prompt log-probabilities could not be checked: no reference given and the "
                               "next-token figures do not cover the prompt's last token", retryable=False,
                               kind=WRONG_FIGURES)
            return figures

        evidence: dict = {}
        _check(capabilities, "prompt_logprobs", prompt_logprobs)
        capabilities["prompt_logprobs"] = {**evidence, **capabilities["prompt_logprobs"]}
    return capabilities
