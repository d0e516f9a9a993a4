"""Register a model behind an OpenAI-compatible endpoint, after probing what it can serve."""
import json

from django.core.management.base import BaseCommand, CommandError

from modeleval import actions


class Command(BaseCommand):
    help = ("Register a model behind an OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, TGI, llama.cpp's "
            "server). The endpoint is probed first; modes it cannot serve correctly are refused later with the "
            "reason.")

    def add_arguments(self, parser):
        parser.add_argument("name", help="name of the model here (a slug)")
        parser.add_argument("--endpoint", default="", help='base URL up to "/v1", e.g. http://127.0.0.1:8000/v1')
        parser.add_argument("--api-model", default="", help='the "model" the endpoint expects in requests')
        parser.add_argument("--key-env", default="", help="NAME of the environment variable holding the key "
                                                          "(never the key itself); empty for none")
        parser.add_argument("--concurrency", type=int, default=4, help="requests in flight at once")
        parser.add_argument("--reference", default="", help='a local source of the same weights ("packaged", a '
                                                            '.gguf, a folder) to check prompt log-probabilities')
        parser.add_argument("--reprobe", action="store_true", help="probe an already registered model again")

    def handle(self, name, endpoint, api_model, key_env, concurrency, reference, reprobe, **options):
        try:
            if reprobe:
                spec = actions.reprobe_model(actions.model_named(name), reference=reference or None)
            else:
                if not (endpoint and api_model):
                    raise CommandError("--endpoint and --api-model are required to register a model")
                spec = actions.register_api_model(name, endpoint, api_model, api_key_env=key_env,
                                                  concurrency=concurrency, reference=reference)
        except actions.RunError as error:
            raise CommandError(f"{error.code}: {error}") from None
        self.stdout.write(f"model {spec.name} -> {spec.endpoint} ({spec.api_model})")
        for capability, found in spec.capabilities.items():
            if isinstance(found, dict):
                state = "ok" if found.get("ok") else f"refused: {found.get('reason')}"
                self.stdout.write(f"  {capability}: {state}")
        self.stdout.write(json.dumps({"probed_at": spec.capabilities.get("probed_at")}))
