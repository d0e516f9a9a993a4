"""Annotator load: simulated annotators run lease -> (read) -> submit against a live server, and the same
generator drives HumanBaseline, the psycopg floor or Label Studio through a small client class.

    python perf/annotator_load.py --users 8,32,64 --rates 25,50,100 --items 2000 --k 2 [--floor] [--page]
    python perf/annotator_load.py --target both --users 8,32,64 --rates 25,50,100 --ls-db postgresql --floor --page

Two loads. Closed loop (--users): N users with no think time, each sending its next request as soon as the
last one is answered, until the work runs out; it gives the saturated throughput. Open loop (--rates): cycles
arrive at a fixed rate for --open-seconds (as annotators with think time behave, each arrival served by
whichever of --open-users simulated annotators is free); a cycle's latency runs from its scheduled arrival,
so time spent queueing counts. Arrivals not served within --drain seconds after the last one are counted as
dropped.

HumanBaseline: gunicorn with deploy/gunicorn.conf.py (production settings, DB_CONN_MAX_AGE=60 as in
deploy/env.example) on PostgreSQL, in a database this script creates and drops. Each level gets its own
campaign with overlap --k, so one level never sees the previous level's leftovers. The API client asks
without progress (?progress=0); --page adds the annotation page's cycle (the labeller's progress with each
submission, and with a lease from another batch). --floor adds the same statements sent straight from psycopg
(perf/annotator_floor.py), level by level beside HumanBaseline. --repeat R runs each of HumanBaseline's closed
levels R times with the sides taking turns, and prints the floor's throughput over HumanBaseline's for each pair
and their median: on a machine whose speed drifts by a fifth from one minute to the next, one pair's ratio says
little. Label Studio: its own venv under perf/.envs/labelstudio (see perf/labelstudio_target.py), same levels.

Per level it prints one JSON line (with the load average of the machine before and after), then a markdown
table of them all: cycles per second, p50/p99 of a cycle, peak RSS summed over the server's process tree,
items with more labels than the overlap allows, the number of 5xx answers, and the CPU time per cycle of the
web server, of the generator itself and of the rest of the machine (PostgreSQL, mostly): on a machine whose cores
the three share, what each costs decides the saturated throughput. The simulated annotators speak plain http.client
over keep-alive connections (requests' own work was 2.5 ms of CPU per cycle, taken from the server's cores).
"""
import argparse
import contextlib
import http.client
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from perf._services import recreate_database, release_database, stop_process_group  # noqa: E402

_json_dumps = json.dumps
ANSWERS = {"needs_verification": False, "score": 2}
MC_ANSWERS = {"answer": "A"}


# ---------------------------------------------------------------- the generator


class Answer:
    """What a simulated annotator reads of a response."""

    def __init__(self, status_code, content):
        self.status_code, self.content = status_code, content

    @property
    def text(self):
        return self.content.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)


class HttpClient:
    """One simulated annotator: a keep-alive HTTP/1.1 connection that counts every answer's status code.

    Plain http.client rather than requests: the simulated browsers run on the machine they measure, and
    requests' own work per call (about a core's worth at 32 users) would be taken from the server's two cores
    (perf/RESULTS.md); both targets use this client."""

    def __init__(self, base, token, scheme="Token"):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port, self.prefix, self.codes = parts.hostname, parts.port, parts.path.rstrip("/"), Counter()
        self.headers = {"Authorization": f"{scheme} {token}", "Accept": "application/json"}
        self.connection = None

    def call(self, method, path, json=None):
        body = None if json is None else _json_dumps(json).encode()
        headers = self.headers if body is None else {**self.headers, "Content-Type": "application/json"}
        for attempt in (1, 2):  # a keep-alive connection the server closed meanwhile is opened again once
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                self.connection.request(method, self.prefix + path, body=body, headers=headers)
                response = self.connection.getresponse()
                answer = Answer(response.status, response.read())
                break
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
        self.codes[answer.status_code] += 1
        return answer

    # A target's client implements these two; next() returns a handle for submit(), or None when there is no work.
    def next(self):
        raise NotImplementedError

    def submit(self, handle):
        raise NotImplementedError


@dataclass
class LoadResult:
    users: int
    cycles: int = 0
    seconds: float = 0.0
    latencies: list = field(default_factory=list)
    codes: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)
    stopped_by: str = "no_work"
    peak_rss_mb: float = 0.0
    offered: float = None  # open loop: arrivals per second
    dropped: int = 0
    cpu_seconds: dict = field(default_factory=dict)  # CPU time spent during the level, per side (cpu_seconds())

    @property
    def server_errors(self):
        return sum(n for code, n in self.codes.items() if code >= 500)

    def summary(self, **extra):
        lat = sorted(self.latencies)
        pct = (lambda q: round(1000 * lat[min(len(lat) - 1, int(q * len(lat)))], 1)) if lat else (lambda q: None)
        return {"users": self.users, "cycles": self.cycles, "seconds": round(self.seconds, 2),
                "cycles_per_s": round(self.cycles / self.seconds, 1) if self.seconds else 0.0,
                "p50_ms": pct(0.50), "p99_ms": pct(0.99),
                "mean_ms": round(1000 * statistics.fmean(lat), 1) if lat else None,
                "peak_rss_mb": round(self.peak_rss_mb, 1), "5xx": self.server_errors,
                "codes": {str(k): v for k, v in sorted(self.codes.items())}, "failures": len(self.failures),
                "stopped_by": self.stopped_by, "mode": "closed" if self.offered is None else "open",
                "offered_per_s": self.offered, "dropped": self.dropped,
                "cpu_ms_per_cycle": {side: round(1000 * seconds / self.cycles, 2)
                                     for side, seconds in self.cpu_seconds.items()} if self.cycles else {},
                **extra}


class RssSampler(threading.Thread):
    """Peak of the summed RSS of a process and all its descendants (gunicorn master + workers)."""

    def __init__(self, pid, every=0.2):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak, self.done = pid, every, 0, threading.Event()

    def total(self):
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        rss = 0
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                rss += proc.memory_info().rss
        return rss

    def run(self):
        while not self.done.wait(self.every):
            self.peak = max(self.peak, self.total())

    def stop(self):
        self.done.set()
        self.join()
        return self.peak / 2**20


def drive(clients, *, think=0.0, max_seconds=300.0, max_cycles=None, server_pid=None, on_cycle=None):
    """Run every client in its own thread: next -> sleep(think) -> submit, until it is told there is no work.
    Bounded by max_seconds (wall clock) and max_cycles (all clients together). A client stops after 3 failed
    calls in a row (status it did not expect, or a transport error), so a broken server cannot spin it."""
    result, lock = LoadResult(users=len(clients)), threading.Lock()
    deadline = time.monotonic() + max_seconds
    budget = [max_cycles if max_cycles is not None else float("inf")]
    barrier = threading.Barrier(len(clients))

    def run(client):
        latencies, misses = [], 0
        barrier.wait()
        while time.monotonic() < deadline and misses < 3:
            with lock:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
            try:
                began = time.perf_counter()
                handle = client.next()
                if handle is None:
                    break
                served = time.perf_counter()
                if think:
                    time.sleep(think)
                resumed = time.perf_counter()
                ok = client.submit(handle)
            except Exception as error:  # noqa: BLE001 (recorded, counted as a miss)
                ok = False
                with lock:
                    result.failures.append(repr(error)[:300])
            else:
                if ok:
                    latencies.append((served - began) + (time.perf_counter() - resumed))
                    if on_cycle:
                        on_cycle(client)
            misses = 0 if ok else misses + 1
        with lock:
            result.latencies.extend(latencies)
            result.codes.update(client.codes)
            if misses >= 3:
                result.failures.append(f"{type(client).__name__} gave up after 3 failed cycles")

    sampler = RssSampler(server_pid) if server_pid else None
    if sampler:
        sampler.start()
    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in clients]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic()) + 130)  # + one request timeout
    result.seconds = time.perf_counter() - began
    result.cycles = len(result.latencies)
    if time.monotonic() >= deadline:
        result.stopped_by = "max_seconds"
    elif budget[0] <= 0:
        result.stopped_by = "max_cycles"
    if any(t.is_alive() for t in threads):
        result.stopped_by, result.failures = "hung", [*result.failures, "a client thread did not finish"]
    if sampler:
        result.peak_rss_mb = sampler.stop()
    return result


def drive_open(clients, *, rate, seconds, drain=30.0, server_pid=None):
    """Open loop: rate x seconds cycle arrivals at fixed intervals, each served by a free client (waiting for
    one when all are busy). Latency runs from the scheduled arrival. Arrivals still unserved `drain` seconds
    after the last one are dropped; cycles/s is completed cycles over the time to the last completion."""
    result, lock = LoadResult(users=len(clients), offered=rate), threading.Lock()
    free = queue.Queue()
    for client in clients:
        free.put(client)
    arrivals = int(rate * seconds)
    start = time.perf_counter() + 0.1
    hard_stop = start + seconds + drain
    last_done = [start]

    def cycle(scheduled):
        try:
            client = free.get(timeout=max(0.0, hard_stop - time.perf_counter()))
        except queue.Empty:
            return
        try:
            handle = client.next()
            ok = handle is not None and client.submit(handle)
        except Exception as error:  # noqa: BLE001 (recorded)
            ok = False
            with lock:
                result.failures.append(repr(error)[:300])
        finally:
            free.put(client)
        done = time.perf_counter()
        with lock:
            if ok:
                result.latencies.append(done - scheduled)
                last_done[0] = max(last_done[0], done)
            elif handle is None:
                result.failures.append("no work left")

    sampler = RssSampler(server_pid) if server_pid else None
    if sampler:
        sampler.start()
    pool = ThreadPoolExecutor(max_workers=len(clients))
    futures = []
    for i in range(arrivals):
        scheduled = start + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        futures.append(pool.submit(cycle, scheduled))
    wait_all(futures, timeout=max(1.0, hard_stop - time.perf_counter()) + 130)
    pool.shutdown(wait=False, cancel_futures=True)
    result.cycles = len(result.latencies)
    result.seconds = last_done[0] - start
    result.dropped = arrivals - result.cycles - len(result.failures)
    result.stopped_by = "arrivals_done" if result.cycles == arrivals else "drain"
    for client in clients:
        result.codes.update(client.codes)
    if sampler:
        result.peak_rss_mb = sampler.stop()
    return result


# ---------------------------------------------------------------- HumanBaseline


class HumanBaselineClient(HttpClient):
    """POST /campaigns/{id}/next/ -> POST /assignments/{id}/submit/ (a 409 too_early waits and retries once)."""

    def __init__(self, base, token, campaign_id, answers=ANSWERS, progress=False):
        super().__init__(base, token)
        self.campaign_id, self.answers = campaign_id, answers
        # The page shows the labeller's progress after each item (an API client need not ask for it): with the
        # submission's answer, and with a lease only when it is the first or from another batch (then the lease
        # is read again with it), as frontend/static/frontend/js/annotate.js does.
        self.page, self.shown_batch = progress, None

    def next(self):
        query = "" if self.page and self.shown_batch is None else "?progress=0"
        response = self.call("POST", f"/api/v1/campaigns/{self.campaign_id}/next/{query}")
        if response.status_code != 200:
            raise RuntimeError(f"next: {response.status_code} {response.text[:200]}")
        lease = response.json()["assignment"]
        if lease is None:
            return None
        if self.page and "progress" not in lease and lease["batch_id"] != self.shown_batch:
            response = self.call("GET", f"/api/v1/assignments/{lease['id']}/")
            if response.status_code != 200:
                raise RuntimeError(f"lease: {response.status_code} {response.text[:200]}")
            lease = response.json()
        if "progress" in lease:
            self.shown_batch = lease["progress"]["batch_id"]
        return lease["id"]

    def submit(self, assignment_id):
        body = {"client_submission_id": str(uuid.uuid4()), "answers": self.answers}
        query = "" if self.page else "?progress=0"
        for _ in range(2):
            response = self.call("POST", f"/api/v1/assignments/{assignment_id}/submit/{query}", json=body)
            if response.status_code == 409 and response.json().get("code") == "too_early":
                time.sleep(response.json().get("seconds_left", 0.1))
                continue
            if self.page and response.status_code in (200, 201):
                self.shown_batch = response.json()["progress"]["batch_id"]
            return response.status_code in (200, 201)
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url, proc, timeout=60, ok=(200, 401, 403)):
    """Poll url until it answers; False if the process exited or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if requests.get(url, timeout=5).status_code in ok:
                return True
        except requests.RequestException:
            pass
        time.sleep(0.3)
    return False


class Gunicorn:
    """gunicorn -c deploy/gunicorn.conf.py config.wsgi on a free loopback port, in its own process group."""

    def __init__(self, env, log_path, workers=2, threads=4):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers, self.threads, self.log_path = workers, threads, Path(log_path)
        env = {**env, "GUNICORN_BIND": f"127.0.0.1:{self.port}", "GUNICORN_WORKERS": str(workers),
               "GUNICORN_THREADS": str(threads), "GUNICORN_ACCESS_LOG": os.devnull,
               # max_requests would recycle workers mid-run and turn a restart into a latency outlier.
               "GUNICORN_MAX_REQUESTS": "0"}
        self.log = open(self.log_path, "w")  # noqa: SIM115 -- the server writes it until stop() closes it
        self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "config.wsgi"],
                                     env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        if not wait_until_up(f"{self.base}/api/v1/benchmarks/", self.proc):
            self.stop()
            raise RuntimeError(f"gunicorn did not start:\n{self.log_path.read_text()[-2000:]}")

    def stop(self):
        stop_process_group(self.proc)
        self.log.close()


def server_env(database_url, **extra):
    """What gunicorn needs: production mode over plain HTTP on loopback, persistent connections."""
    env = {**os.environ, "DATABASE_URL": database_url, "HB_PRODUCTION": "1", "HB_HTTPS": "0",
           "SECRET_KEY": "load-test-only-" + "x" * 40, "DEBUG": "0", "DB_CONN_MAX_AGE": "60", **extra}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return env


def make_load_campaign(name, items, k, annotators, *, batch_size=None, min_reading_seconds=0, multiple_choice=False,
                       start=False):
    """A benchmark of `items` one-question dialogues and a production campaign over it with overlap k whose
    annotators are `annotators`; batches are cut. The question is DiQAD's quality score (answer with ANSWERS),
    or with `multiple_choice` a four-option question a model run can score too (answer with MC_ANSWERS).
    Needs Django set up."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from annotation import actions
    from benchmarks.importers.dialogbench import multiple_choice_form
    from benchmarks.importers.diqad import quality_form
    from benchmarks.models import Benchmark, Item, Task

    staff = User.objects.get_or_create(username="load-boss", defaults={"is_staff": True})[0]
    task = Task.objects.create(benchmark=Benchmark.objects.create(slug=name, name=name), slug="q", name="q",
                               form=multiple_choice_form() if multiple_choice else quality_form())

    def fields(i):
        if not multiple_choice:
            return {}
        return {"options": {letter: f"reply {letter.lower()} {i}" for letter in "ABCD"}}

    Item.objects.bulk_create([Item(task=task, external_id=f"{name}-{i:05d}", content_hash=f"{name}-{i}",
                                   dialogue=[{"speaker": "user", "text": f"hello {i}"},
                                             {"speaker": "expert", "text": f"answer {i}"}],
                                   fields=fields(i), source_gold={"answer": "A"} if multiple_choice else None)
                              for i in range(items)], batch_size=1000)
    campaign = actions.create_campaign(actor=staff, name=name, benchmark=name, protocol="production",
                                       settings={"overlap": k, "min_reading_seconds": min_reading_seconds,
                                                 "batch_size": batch_size or items})
    for user in annotators:
        actions.add_member(campaign, actor=staff, user=user, role="annotator")
    actions.cut_batches(campaign, actor=staff)
    if start:
        # The first lease would start it; started here, every side (the psycopg floor too) begins alike.
        with transaction.atomic():
            actions.start_next_open_batch(campaign, staff)
    return campaign, staff


def label_counts(campaign):
    """(over-assigned items, items with (annotator) twice, current labels) of a campaign, from the database."""
    from django.db.models import Count

    from annotation.models import Annotation

    labels = Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)
    per_item = labels.values("batch_item").annotate(n=Count("id"), people=Count("annotator", distinct=True))
    k = campaign.settings_versions.order_by("-version").first().overlap
    over = sum(1 for row in per_item if row["n"] > k)
    twice = sum(1 for row in per_item if row["people"] < row["n"])
    return over, twice, labels.count()


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def levels(args, k=None):
    """(name, closed-loop users or None, open-loop rate or None, items) for every level, closed ones first;
    an open level gets the items its arrivals need at overlap k, and some to spare."""
    k = k or args.k
    out = [(f"{users}u", users, None, args.items) for users in args.users]
    for rate in args.rates:
        out.append((f"{rate}ps", None, rate, int(rate * args.open_seconds * 1.2 / k) + args.open_users))
    return out


def cpu_seconds(server_pid):
    """CPU time used so far (user + system): by the web server's processes, by this process (the simulated
    annotators; for the floor, its psycopg clients too) and by the whole machine, whose remainder is PostgreSQL's
    and the rest's (counted machine-wide, as PostgreSQL's backends come and go with their connections)."""
    def used(proc):
        try:
            times = proc.cpu_times()
            return times.user + times.system
        except psutil.NoSuchProcess:
            return 0.0

    server = 0.0
    if server_pid:
        try:
            root = psutil.Process(server_pid)
            server = sum(used(p) for p in [root, *root.children(recursive=True)])
        except psutil.NoSuchProcess:
            pass
    machine = psutil.cpu_times()
    busy = machine.user + machine.nice + machine.system + machine.irq + machine.softirq + machine.steal
    return {"server": server, "generator": used(psutil.Process()), "machine": busy}


def run_level(clients, users, rate, args, server_pid, items, k):
    before = cpu_seconds(server_pid)
    if rate is None:
        result = drive(clients, think=args.think, max_seconds=args.max_seconds, max_cycles=int(items * k * 1.5),
                       server_pid=server_pid)
    else:
        result = drive_open(clients, rate=rate, seconds=args.open_seconds, drain=args.drain, server_pid=server_pid)
    after = cpu_seconds(server_pid)
    used = {side: after[side] - before[side] for side in after}
    result.cpu_seconds = {"server": used["server"], "generator": used["generator"],
                          "postgres_and_rest": used["machine"] - used["server"] - used["generator"]}
    return result


def run_humanbaseline(args):
    """Every level on HumanBaseline (the API cycle; with --page also the page's), and with --floor the same
    level from psycopg right after it, so that the sides of a comparison run minutes apart at most."""
    recreate_database(args.database_url)
    os.environ.update(DATABASE_URL=args.database_url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0")
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    rows, server = [], None
    try:
        import django
        django.setup()
        from annotator_floor import FloorClient  # noqa: E402 (perf/ is on sys.path when run as a script)
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.db import connections
        from rest_framework.authtoken.models import Token

        call_command("migrate", verbosity=0)
        most = max([*args.users, args.open_users if args.rates else 0])
        people = [User.objects.create_user(f"ann{i:03d}") for i in range(most)]
        tokens = [Token.objects.create(user=u).key for u in people]
        workdir = ROOT / "perf" / "out"
        workdir.mkdir(parents=True, exist_ok=True)
        server = Gunicorn(server_env(args.database_url), workdir / "annotator_load_gunicorn.log",
                          workers=args.workers, threads=args.threads)
        print(f"# HumanBaseline: gunicorn {args.workers} workers x {args.threads} threads (gthread), "
              f"PostgreSQL {args.database_url.rsplit('/', 1)[1]}, k {args.k}, think {args.think} s", flush=True)
        sides = [("humanbaseline", False)] + ([("humanbaseline-page", True)] if args.page else [])
        sides += [("psycopg-floor", None)] if args.floor else []
        for name, users, rate, items in levels(args):
            n = users or args.open_users
            # Closed levels run --repeat times with the sides taking turns, so that each pair's ratio compares
            # two runs seconds apart on a machine whose speed drifts.
            for turn, (target, progress) in enumerate(sides * (args.repeat if users else 1)):
                round_no = turn // len(sides) + 1
                campaign, _ = make_load_campaign(f"load-{target}-{name}-{round_no}", items, args.k, people[:n],
                                                 start=True)
                connections.close_all()
                if progress is None:
                    clients = [FloorClient(args.database_url, t, campaign.pk, ANSWERS) for t in tokens[:n]]
                else:
                    clients = [HumanBaselineClient(server.base, t, campaign.pk, progress=progress) for t in tokens[:n]]
                before = load_average()
                result = run_level(clients, users, rate, args, None if progress is None else server.proc.pid,
                                   items, args.k)
                for client in clients:
                    getattr(client, "close", lambda: None)()
                over, twice, labels = label_counts(campaign)
                row = result.summary(target=target, over_assigned=over, same_person_twice=twice, labels=labels,
                                     items=items, load_before=before, load_after=load_average(), round=round_no)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        if server:
            server.stop()
        release_database(args.database_url, keep=args.keep_db)
    return rows


def table(rows):
    head = ("| target | load | cycles | cycles/s | p50 ms | p99 ms | dropped | peak RSS MB | over-assigned | 5xx "
            "| CPU ms per cycle: server / PostgreSQL and the rest / generator | load avg before/after |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    repeated = any(r.get("round", 1) > 1 for r in rows)
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['target']} | failed: {r['error'][-300:]!r} |")
            continue
        load = f"{r['users']} users" if r["mode"] == "closed" else f"{r['offered_per_s']}/s offered"
        load += f", round {r['round']}" if repeated and r["mode"] == "closed" and "round" in r else ""
        cpu = r.get("cpu_ms_per_cycle") or {}
        lines.append(f"| {r['target']} | {load} | {r['cycles']} | {r['cycles_per_s']} | {r['p50_ms']} | "
                     f"{r['p99_ms']} | {r['dropped']} | {r['peak_rss_mb']} | {r.get('over_assigned')} | {r['5xx']} "
                     f"| {cpu.get('server', '-')} / {cpu.get('postgres_and_rest', '-')} / {cpu.get('generator', '-')} "
                     f"| {r.get('load_before')} / {r.get('load_after')} |")
    return "\n".join(lines)


def floor_ratios(rows):
    """Per closed level: the floor's cycles/s over HumanBaseline's API cycle's, round by round, and their median
    (the figure to hold against the aim of 2x; one pair alone moves with the machine's speed)."""
    by_level = {}
    for r in rows:
        if r.get("mode") == "closed" and r["target"] in ("humanbaseline", "psycopg-floor") and r.get("cycles_per_s"):
            by_level.setdefault(r["users"], {}).setdefault(r.get("round", 1), {})[r["target"]] = r["cycles_per_s"]
    out = []
    for users, rounds in by_level.items():
        ratios = [round(pair["psycopg-floor"] / pair["humanbaseline"], 2) for _, pair in sorted(rounds.items())
                  if len(pair) == 2]
        if ratios:
            out.append({"users": users, "ratios": ratios, "median": round(statistics.median(ratios), 2)})
    return out


def ratio_table(ratios):
    lines = ["| load | floor / HumanBaseline (API cycle), round by round | median |", "|---|---|---|"]
    lines += [f"| {r['users']} users | {', '.join(f'{x}x' for x in r['ratios'])} | {r['median']}x |" for r in ratios]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", choices=["humanbaseline", "labelstudio", "both"], default="humanbaseline")
    numbers = lambda text: [int(x) for x in text.split(",") if x]  # noqa: E731
    parser.add_argument("--users", type=numbers, default=[8, 32, 64], help="closed-loop levels (users)")
    parser.add_argument("--rates", type=numbers, default=[], help="open-loop levels (cycles offered per second)")
    parser.add_argument("--open-seconds", type=float, default=20.0, help="arrivals last this long per open level")
    parser.add_argument("--open-users", type=int, default=64, help="simulated annotators serving the arrivals")
    parser.add_argument("--drain", type=float, default=30.0, help="open loop: seconds after the last arrival")
    parser.add_argument("--floor", action="store_true", help="also the same statements from psycopg")
    parser.add_argument("--page", action="store_true", help="also the page's cycle (with the labeller's progress)")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--k", type=int, default=2, help="overlap (HumanBaseline; Label Studio runs with 1)")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between next and submit")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each closed level this many times, the sides taking turns (with --floor: the "
                             "median ratio)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--max-seconds", type=float, default=300.0, help="wall-clock cap per user count")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/hb_annotator_load")
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--ls-items", type=int, default=None, help="Label Studio tasks (default: --items)")
    parser.add_argument("--ls-db", default="sqlite,postgresql", help="Label Studio databases to try, in order")
    args = parser.parse_args(argv)
    rows = []
    if args.target in ("humanbaseline", "both"):
        rows += run_humanbaseline(args)
    if args.target in ("labelstudio", "both"):
        from labelstudio_target import run_labelstudio  # noqa: E402 (perf/ is on sys.path when run as a script)
        rows += run_labelstudio(args, client_base=HttpClient, levels=levels, run_level=run_level)
    print()
    print(table(rows))
    ratios = floor_ratios(rows)
    if ratios:
        print()
        print(ratio_table(ratios))
    return rows


if __name__ == "__main__":
    main()
