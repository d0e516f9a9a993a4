"""A model behind an OpenAI-compatible endpoint, as the scorers of `modeleval.scoring` use it.

`ApiModel` stands where a loaded checkpoint stands: it answers chat prompts (generation, judging)
and gives next-word probabilities read from `top_logprobs` (rating, yes/no). Every request goes
through the response cache (`ApiResponse`, keyed by the exact request): a cached answer is never
asked for again, and each new answer is stored the moment it arrives, so a chunk that fails
half-way (the server killed, the worker killed) keeps what it paid for. Requests run in parallel up
to the model's `concurrency`, each retried with backoff by `apiclient.Endpoint.post`.
"""
from __future__ import annotations

import json
import random
import time
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

import httpx
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from . import apiclient, endpoints
from .apiclient import CHAT, COMPLETIONS, TOP_LOGPROBS
from .models import ApiResponse, ModelSpec
from .scorers.prompts import prompt_text


def endpoint_of(spec: ModelSpec) -> apiclient.Endpoint:
    """The spec's endpoint, once the operator's rules allow it as they stand now (RunError otherwise): a model
    registered before a host or a key variable was withdrawn is not called."""
    endpoints.check_target(spec.endpoint, spec.api_key_env)
    return apiclient.Endpoint(spec.endpoint, spec.api_model, spec.api_key_env, resolve=endpoints.checked_addresses,
                              **settings.MODELEVAL_API_CLIENT)


# Atomic in Redis: drop expired leases, then take a slot if one is free.
TAKE_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
  return 1
end
return 0
"""


class ModelSlots:
    """At most `limit` requests in flight for one model across every worker process and machine on
    the same Redis: a sorted set of leases (a random token scored by its expiry), so that the slot of
    a worker killed mid-request frees itself when its lease runs out."""

    def __init__(self, url: str, model_name: str, limit: int, lease_s: float):
        import redis

        self.redis, self.key = redis.Redis.from_url(url), f"hb:api-slots:{model_name}"
        self.limit, self.lease_s = limit, lease_s
        self._take = self.redis.register_script(TAKE_SLOT)

    @contextmanager
    def hold(self):
        token = uuid.uuid4().hex
        while not self._take(keys=[self.key], args=[time.time(), self.lease_s, self.limit, token]):
            time.sleep(0.05 + random.random() / 10)
        try:
            yield
        finally:
            self.redis.zrem(self.key, token)


@contextmanager
def _unlimited():
    yield


def slots_of(spec: ModelSpec):
    """The model's cross-process request limit where workers share a Redis broker; else the thread
    pool of each chunk is the only limit (one process: the embedded default)."""
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        lease = settings.MODELEVAL_API_CLIENT["timeout"] * (settings.MODELEVAL_API_CLIENT["max_retries"] + 1) + 60
        return ModelSlots(url, spec.name, spec.concurrency, lease).hold
    return _unlimited


def _store(endpoint, key, path, body, answer):
    figures = apiclient.usage(answer)
    try:
        with transaction.atomic():
            ApiResponse.objects.create(key=key, endpoint=endpoint.base_url, path=path, request=body, response=answer,
                                       **figures)
    except IntegrityError:  # another worker asked the same request meanwhile: count the second answer
        ApiResponse.objects.filter(key=key).update(fetched=F("fetched") + 1)


class ApiModel:
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.endpoint = endpoint_of(spec)
        self.slot = slots_of(spec)
        self.calls: dict[str, list[dict]] = defaultdict(list)  # prompt text -> the requests it needed

    def fetch(self, requests: list[tuple[str, str, dict]]) -> list[dict]:
        """The answers to (prompt text, path, body) requests, in order: from the cache, else from the
        endpoint, `concurrency` at a time. Answers that arrive are stored even when another request
        of the batch fails; the first failure is raised after all have ended."""
        keys = [apiclient.request_key(self.endpoint.base_url, path, body) for _, path, body in requests]
        known = {r.key: r.response for r in ApiResponse.objects.filter(key__in=set(keys))}
        answers = dict(known)
        missing = {key: (path, body) for key, (_, path, body) in zip(keys, requests, strict=True) if key not in known}
        failure = None
        if missing:
            workers = max(1, self.spec.concurrency)
            limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)
            with self.endpoint.client(limits=limits) as client, \
                    ThreadPoolExecutor(workers) as pool:
                futures = {pool.submit(self._post, path, body, client): key
                           for key, (path, body) in missing.items()}
                for future in as_completed(futures):
                    key = futures[future]
                    try:
                        answer = future.result()
                    except apiclient.ApiError as error:
                        failure = failure or error
                        continue
                    path, body = missing[key]
                    _store(self.endpoint, key, path, body, answer)  # in this thread: one database connection
                    answers[key] = answer
        if failure is not None:
            raise failure
        out = []
        for (text, path, body), key in zip(requests, keys, strict=True):
            answer = answers[key]
            recorded = self.calls[text]
            if not any(call["cache_key"] == key for call in recorded):
                recorded.append({"path": path, "request": body, "response": answer, "cache_key": key,
                                 "cached": key in known, "usage": apiclient.usage(answer)})
            out.append(answer)
        return out

    def _post(self, path, body, client):
        with self.slot():
            return self.endpoint.post(path, body, client)

    # --- what the scorers ask ------------------------------------------------------------

    def chat(self, users: list, *, system: str = "", max_new_tokens: int = 16, **extra) -> dict[str, str]:
        """{prompt text: reply}, each distinct prompt (a user message's text, or a chat of (role, content)
        pairs, shown as `prompts.prompt_text`) asked once, greedily; `extra` goes into each request (e.g. a study's
        presence_penalty)."""
        unique = list(dict.fromkeys(users))
        answers = self.fetch([(prompt_text(user), CHAT, apiclient.chat_body(self.spec.api_model, user, system=system,
                                                                             max_tokens=max_new_tokens, **extra))
                              for user in unique])
        return {prompt_text(user): apiclient.chat_text(answer) for user, answer in zip(unique, answers, strict=True)}

    def converse(self, conversations: list[list[dict]], *, max_new_tokens: int = 16) -> list[tuple[str, str, int]]:
        """For each conversation (role / content turns, the last the user's), (the request's messages as JSON,
        the reply, the reply's completion tokens as the server counts them), greedily."""
        texts = [json.dumps(c, ensure_ascii=False) for c in conversations]
        answers = self.fetch([(text, CHAT, apiclient.messages_body(self.spec.api_model, c, max_tokens=max_new_tokens))
                              for text, c in zip(texts, conversations, strict=True)])
        return [(text, apiclient.chat_text(a), apiclient.usage(a)["completion_tokens"])
                for text, a in zip(texts, answers, strict=True)]

    def word_probs(self, texts: list[str], words, spellings=("{}", " {}")) -> list[dict[str, float]]:
        """For each text, each word's probability as its continuation (summed over spellings), read from
        the top log-probabilities of the next token, and of the token after a whitespace token where a
        spelling begins with one (a tokenizer that splits " 3" into " " and "3")."""
        model = self.spec.api_model

        def body(prompt):
            return apiclient.completion_body(model, prompt, logprobs=TOP_LOGPROBS)

        tops = [apiclient.next_token_logprobs(a) for a in self.fetch([(t, COMPLETIONS, body(t)) for t in texts])]
        spelled = [s.format(w) for w in words for s in spellings]
        follow_up = [(i, ws) for i, top in enumerate(tops) for ws in apiclient.whitespace_tokens(top)
                     if any(s.startswith(ws) and s != ws and s not in top for s in spelled)]
        after = self.fetch([(texts[i], COMPLETIONS, body(texts[i] + ws)) for i, ws in follow_up])
        follow = defaultdict(dict)
        for (i, ws), answer in zip(follow_up, after, strict=True):
            follow[i][ws] = apiclient.next_token_logprobs(answer)
        return [apiclient.word_probs_from_top(top, words, spellings, follow[i]) for i, top in enumerate(tops)]

    def calls_for(self, row: dict) -> list[dict]:
        """The requests behind one prediction row: those of every prompt the row shows."""
        texts = [row.get("prompt")] + [o.get("prompt") for o in row.get("options") or [] if isinstance(o, dict)]
        out, seen = [], set()
        for text in texts:
            for call in self.calls.get(text or "", []):
                if call["cache_key"] not in seen:
                    seen.add(call["cache_key"])
                    out.append(call)
        return out


# --- registration --------------------------------------------------------------------------


def reference_logprobs(source: str) -> list[tuple[str, float]]:
    """(token, log-probability) of the probe text computed in-process from a local checkpoint: what
    an endpoint serving the same weights must give for its prompt log-probabilities to be trusted."""
    import torch

    from .scorers import loading

    loaded = loading.get_model(source, cache_dir=settings.MODEL_CACHE_DIR)
    ids = loaded.tokenizer(apiclient.PROBE_TEXT, return_tensors="pt").input_ids
    with torch.inference_mode():
        logits = loaded.model(ids).logits[0].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    tokens = [loaded.tokenizer.decode([t]) for t in ids[0].tolist()]
    values = [None] + [float(logprobs[i - 1, ids[0, i]]) for i in range(1, ids.shape[1])]
    return list(zip(tokens, values, strict=True))
