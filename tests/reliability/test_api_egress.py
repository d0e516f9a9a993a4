"""Secrets stay home: a model behind an API may name only an environment variable the operator declared for
API keys, its endpoint only a host the operator allowed (loopback and private addresses only when allowed),
checked at registration through every door and again when a chunk calls it; and the probe is no port
scanner: its refusal names the kind of failure only, the same for a closed port, a database, a web page."""
import json
import socket
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, runner
from modeleval.models import Backend, ModelSpec, RunState
from tests.conftest import DEMO_DATA

SECRET = "top-secret-value-of-the-server"


class OpenAIStub(BaseHTTPRequestHandler):
    """A small OpenAI-compatible server that records every request's path and Authorization header."""

    seen: list

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.seen.append((self.path, self.headers.get("authorization")))
        if self.path.endswith("/chat/completions"):
            answer = {"choices": [{"message": {"content": "OK"}}]}
        else:
            answer = {"choices": [{"text": " Paris", "logprobs": {"top_logprobs": [{" Paris": -0.3, " the": -2.0}]}}]}
        if body.get("echo"):
            answer = {"choices": [{"text": "x"}]}
        raw = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


class Answering(BaseHTTPRequestHandler):
    """Something that is not a model server: it answers every request with `status` and `body`."""

    status, body, content_type = 404, b"", "text/html"

    def do_POST(self):
        self.send_response(self.status)
        self.send_header("content-type", self.content_type)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


class Banner(socketserver.BaseRequestHandler):
    """A service that is not HTTP (a database, a broker): it writes its banner and hangs up."""

    def handle(self):
        self.request.sendall(f"-ERR unknown command, {SECRET} redis_version:7.0.15\r\n".encode())


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def stub():
    seen = []
    server = serve(ThreadingHTTPServer(("127.0.0.1", 0), type("Stub", (OpenAIStub,), {"seen": seen})))
    server.seen = seen
    server.endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def staff(db):
    user = User.objects.create_user("staff", password="pw", is_staff=True, is_superuser=True)
    client = APIClient()
    client.force_authenticate(user)
    client.user = user
    return client


@pytest.fixture
def loopback_allowed(settings):
    settings.API_HOSTS = ["127.0.0.1", "localhost"]
    settings.API_ALLOW_PRIVATE = True
    return settings


def register(client, endpoint, key_env=""):
    return client.post("/api/v1/models/", {"name": "judge", "backend": "api", "endpoint": endpoint,
                                           "api_model": "m", "api_key_env": key_env}, format="json")


# ---------------------------------------------------------------- the key's variable

@pytest.mark.django_db
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "HB_SECRET_STASH"])
def test_a_server_secret_cannot_be_named_as_a_key(staff, stub, loopback_allowed, monkeypatch, name):
    monkeypatch.setenv(name, SECRET)
    answer = register(staff, stub.endpoint, name)
    assert answer.status_code == 400, answer.content
    assert answer.json()["code"] == "key_env_not_allowed" and SECRET not in answer.content.decode()
    assert "HB_API_KEY_ENV_PREFIX" in answer.json()["detail"]
    with pytest.raises(CommandError, match="key_env_not_allowed"):
        call_command("register_api_model", "judge", endpoint=stub.endpoint, api_model="m", key_env=name)
    assert stub.seen == [] and not ModelSpec.objects.exists()  # nothing was sent anywhere


@pytest.mark.django_db
def test_declared_key_variables_are_sent(staff, stub, loopback_allowed, monkeypatch):
    loopback_allowed.API_KEY_ENVS = ["PROVIDER_TOKEN"]
    monkeypatch.setenv("HB_API_KEY_JUDGE", "sk-by-prefix")
    monkeypatch.setenv("PROVIDER_TOKEN", "sk-by-name")
    assert register(staff, stub.endpoint, "HB_API_KEY_JUDGE").status_code == 201
    call_command("register_api_model", "judge-2", endpoint=stub.endpoint, api_model="m", key_env="PROVIDER_TOKEN")
    assert {header for _, header in stub.seen} == {"Bearer sk-by-prefix", "Bearer sk-by-name"}


# ---------------------------------------------------------------- the endpoint's host

@pytest.mark.django_db
def test_an_endpoint_host_must_be_allowed(staff, stub, settings):
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = [], True
    refused = register(staff, stub.endpoint)
    assert refused.status_code == 400 and refused.json()["code"] == "endpoint_not_allowed", refused.content
    assert "HB_API_HOSTS" in refused.json()["detail"]
    settings.API_HOSTS = ["api.example.org"]
    assert register(staff, stub.endpoint).json()["code"] == "endpoint_not_allowed"
    assert stub.seen == [] and not ModelSpec.objects.exists()
    settings.API_HOSTS = ["127.0.0.1"]
    assert register(staff, stub.endpoint).status_code == 201 and stub.seen


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_loopback_is_refused_unless_the_operator_allows_it(staff, stub, settings, host):
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["*"], False
    refused = register(staff, f"http://{host}:{stub.server_address[1]}/v1")
    assert refused.status_code == 400 and refused.json()["code"] == "endpoint_not_allowed", refused.content
    assert "HB_API_ALLOW_PRIVATE" in refused.json()["detail"] and stub.seen == []


@pytest.mark.parametrize("url", ["http://10.0.0.7/v1", "http://192.168.1.1:8000/v1", "http://169.254.169.254/v1",
                                 "http://[fd00::1]/v1", "http://0.0.0.0:6379/v1", "http://[::ffff:127.0.0.1]/v1"])
def test_private_addresses_are_refused_before_any_connection(settings, url):
    from modeleval import endpoints  # judged from the address alone: nothing is sent to these

    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["*"], False
    with pytest.raises(actions.RunError) as refused:
        endpoints.check_endpoint(url)
    assert refused.value.code == "endpoint_not_allowed"


def test_credentials_and_other_schemes_are_not_endpoints(settings):
    from modeleval import endpoints

    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["*"], True
    for url in ("file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "http://user:pw@127.0.0.1/v1", "127.0.0.1"):
        with pytest.raises(actions.RunError) as refused:
            endpoints.check_endpoint(url)
        assert refused.value.code == "bad_endpoint", url


@pytest.mark.django_db
def test_the_admin_cannot_point_a_model_elsewhere(staff, stub, loopback_allowed, monkeypatch):
    monkeypatch.setenv("HB_API_KEY_JUDGE", "sk-judge")
    assert register(staff, stub.endpoint, "HB_API_KEY_JUDGE").status_code == 201
    spec = ModelSpec.objects.get(name="judge")
    admin = Client()
    admin.force_login(staff.user)
    change = admin.get(f"/admin/modeleval/modelspec/{spec.pk}/change/").content.decode()
    assert 'name="api_key_env"' not in change and 'name="endpoint"' not in change  # shown, not editable
    admin.post(f"/admin/modeleval/modelspec/{spec.pk}/change/",
               {"dtype": "float32", "device": "cpu", "concurrency": 4, "api_key_env": "SECRET_KEY",
                "endpoint": "http://example.org/v1"})
    spec.refresh_from_db()
    assert (spec.api_key_env, spec.endpoint) == ("HB_API_KEY_JUDGE", stub.endpoint)
    added = admin.post("/admin/modeleval/modelspec/add/", {
        "name": "sneaky", "source": "packaged", "backend": "api", "endpoint": stub.endpoint, "api_model": "m",
        "api_key_env": "SECRET_KEY", "dtype": "float32", "device": "cpu", "concurrency": 4})
    assert added.status_code == 200 and "register_api_model" in added.content.decode()
    assert not ModelSpec.objects.filter(name="sneaky").exists()


# ---------------------------------------------------------------- again when a chunk calls it

@pytest.mark.django_db
def test_a_run_calls_only_what_the_operator_allows_now(staff, stub, loopback_allowed, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRET)
    # Registered before the rules (or written straight into the table): the worker still refuses it.
    spec = ModelSpec.objects.create(name="old", backend=Backend.API, endpoint=stub.endpoint, api_model="m",
                                    api_key_env="SECRET_KEY", capabilities={"chat": {"ok": True}})
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    run = actions.start_run(model=spec, benchmark=Benchmark.objects.get(slug="db-demo"), mode="generate", limit=1,
                            enqueue=False)
    run = runner.run_sync(run)
    assert run.state == RunState.FAILED and "not a variable declared for API keys" in run.reason, run.reason
    assert stub.seen == []
    spec.api_key_env = ""
    spec.save()
    loopback_allowed.API_ALLOW_PRIVATE = False
    run = runner.run_sync(actions.start_run(model=spec, benchmark=Benchmark.objects.get(slug="db-demo"),
                                            mode="generate", limit=1, enqueue=False))
    assert run.state == RunState.FAILED and "HB_API_ALLOW_PRIVATE" in run.reason and stub.seen == []


# ---------------------------------------------------------------- the probe tells nothing of what answered

def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when this returns: nothing listens there


@pytest.fixture
def things_at_addresses():
    """Ports where no model server answers: closed, a non-HTTP service, a web page, text, JSON of another shape."""
    servers = [serve(socketserver.ThreadingTCPServer(("127.0.0.1", 0), Banner))]
    for status, body, kind in ((404, f"<h1>Not Found</h1><p>{SECRET}</p>", "text/html"),
                               (200, f"{SECRET} plain text", "text/plain"),
                               (200, json.dumps({"server": SECRET}), "application/json"),
                               (401, json.dumps({"error": {"message": f"bad key {SECRET}"}}), "application/json")):
        handler = type("Page", (Answering,), {"status": status, "body": body.encode(), "content_type": kind})
        servers.append(serve(ThreadingHTTPServer(("127.0.0.1", 0), handler)))
    ports = [closed_port()] + [server.server_address[1] for server in servers]
    yield ports
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.django_db
def test_probe_errors_name_the_kind_only_and_the_same_for_every_port(staff, loopback_allowed, things_at_addresses):
    loopback_allowed.MODELEVAL_API_CLIENT = {**loopback_allowed.MODELEVAL_API_CLIENT, "timeout": 5}
    details = []
    for port in things_at_addresses:
        answer = register(staff, f"http://127.0.0.1:{port}/v1")
        assert answer.status_code == 400 and answer.json()["code"] == "probe_failed", answer.content
        details.append(answer.json()["detail"].replace(str(port), "PORT"))
    assert all(SECRET not in detail and "redis" not in detail for detail in details), details
    assert len(set(details)) == 1, details  # open, closed, HTTP or not: one answer
    assert details[0].startswith("no_answer: ") and not ModelSpec.objects.exists()


# ---------------------------------------------------------------- the address checked is the address used (issue 41, 3)

PUBLIC = "93.184.216.34"  # a public address: what the rebinding name answers the check with


@pytest.fixture
def rebinding(monkeypatch):
    """A resolver for `rebind.example` that answers a public address first and loopback after (DNS rebinding),
    and connections to the public address refused at once (nothing here may leave the machine): the addresses
    every connection was opened to."""
    real_resolve, real_connect = socket.getaddrinfo, socket.create_connection
    answers, opened = [], []

    def resolve(host, port, *args, **kwargs):
        if host == "rebind.example":
            address = PUBLIC if not answers else "127.0.0.1"
            answers.append(address)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]
        return real_resolve(host, port, *args, **kwargs)

    def connect(address, *args, **kwargs):
        opened.append(address[0])
        if address[0] == PUBLIC:
            raise ConnectionRefusedError("refused (test)")
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(socket, "create_connection", connect)
    return opened


@pytest.mark.django_db
def test_a_rebinding_name_reaches_only_the_address_that_was_checked(staff, stub, settings, rebinding, monkeypatch):
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["rebind.example"], False
    settings.MODELEVAL_API_CLIENT = {**settings.MODELEVAL_API_CLIENT, "max_retries": 0}
    monkeypatch.setenv("HB_API_KEY_JUDGE", SECRET)
    endpoint = f"http://rebind.example:{stub.server_address[1]}/v1"
    answer = register(staff, endpoint, "HB_API_KEY_JUDGE")
    assert answer.status_code == 400 and answer.json()["code"] in ("probe_failed", "endpoint_not_allowed")
    assert stub.seen == [], "the key reached the loopback listener"
    assert "127.0.0.1" not in rebinding
    # A chunk's requests too: each connection resolves once and goes to what it checked, or nowhere.
    spec = ModelSpec.objects.create(name="rebound", backend=Backend.API, endpoint=endpoint, api_model="m",
                                    api_key_env="HB_API_KEY_JUDGE", capabilities={"chat": {"ok": True}})
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    run = runner.run_sync(actions.start_run(model=spec, benchmark=Benchmark.objects.get(slug="db-demo"),
                                            mode="generate", limit=2, enqueue=False))
    assert run.state == RunState.FAILED and stub.seen == [] and "127.0.0.1" not in rebinding


@pytest.mark.django_db
def test_a_pinned_connection_keeps_the_host_name(stub, settings, monkeypatch):
    """The connection goes to the checked address; the request still names the host (Host header; TLS's SNI and
    certificate check use the same name, httpcore's start_tls(server_hostname=origin.host))."""
    from modeleval import apiclient, endpoints

    hosts = []
    real_post = OpenAIStub.do_POST
    monkeypatch.setattr(OpenAIStub, "do_POST", lambda self: (hosts.append(self.headers["host"]), real_post(self)))
    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["model.internal"], True
    real_resolve = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *rest, **kw: real_resolve(
        "127.0.0.1" if host == "model.internal" else host, *rest, **kw))
    endpoint = apiclient.Endpoint(f"http://model.internal:{stub.server_address[1]}/v1", "m",
                                  resolve=endpoints.checked_addresses)
    answer = endpoint.post(apiclient.CHAT, apiclient.chat_body("m", "hi"))
    assert answer == {"choices": [{"message": {"content": "OK"}}]}
    assert hosts == [f"model.internal:{stub.server_address[1]}"]


@pytest.mark.parametrize("address", ["64:ff9b::7f00:1", "64:ff9b::a00:7", "64:ff9b:1::a9fe:a9fe", "2002:7f00:1::1",
                                     "2002:c0a8:101::", "::127.0.0.1", "::10.0.0.7", "::ffff:169.254.169.254",
                                     "2001:0:4136:e378:8000:63bf:80ff:fffe"])
def test_ipv6_forms_of_private_ipv4_addresses_are_refused(settings, address):
    from modeleval import endpoints

    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["*"], False
    with pytest.raises(actions.RunError) as refused:
        endpoints.check_endpoint(f"http://[{address}]:8000/v1")
    assert refused.value.code == "endpoint_not_allowed"


def test_ipv6_forms_of_public_ipv4_addresses_are_judged_by_them(settings):
    from modeleval import endpoints

    settings.API_HOSTS, settings.API_ALLOW_PRIVATE = ["*"], False
    for address in ("64:ff9b::5db8:d822", "2002:5db8:d822::1"):  # 93.184.216.34 through NAT64 and 6to4
        endpoints.check_endpoint(f"http://[{address}]:8000/v1")


def test_the_allow_list_may_name_a_port(settings):
    from modeleval import endpoints

    settings.API_ALLOW_PRIVATE = True
    settings.API_HOSTS = ["127.0.0.1:8000", "[::1]:9000", "localhost"]
    endpoints.check_endpoint("http://127.0.0.1:8000/v1")
    endpoints.check_endpoint("http://[::1]:9000/v1")
    endpoints.check_endpoint("http://localhost:6379/v1")  # no port named: any
    for url in ("http://127.0.0.1:6379/v1", "http://127.0.0.1/v1", "http://[::1]:8000/v1"):
        with pytest.raises(actions.RunError) as refused:
            endpoints.check_endpoint(url)
        assert refused.value.code == "endpoint_not_allowed", url


@pytest.mark.parametrize("name", ["HB_API_KEY_JUDGE\n", "HB_API_KEY_JUDGE\r\n", "\nHB_API_KEY_JUDGE"])
def test_a_key_variable_with_a_newline_is_refused(name):
    from modeleval import endpoints

    with pytest.raises(actions.RunError) as refused:
        endpoints.check_key_env(name)
    assert refused.value.code == "bad_key_env"
