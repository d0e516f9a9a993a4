"""Label Studio 1.23.2 as a load target for perf/annotator_load.py: same generator, its own client.

Installed in its own venv (perf/.envs/labelstudio, git-ignored) so that its Django never meets ours:
    python3 -m venv perf/.envs/labelstudio && perf/.envs/labelstudio/bin/pip install label-studio==1.23.2 \
        "sentry-sdk<3"
(sentry-sdk 3 drops an option Label Studio 1.23.2 passes it: the CLI stops at start-up without the pin.)
`import_project` also reads our own exports in it (tests/reports/test_labelstudio.py).
Started as its README says (`label-studio start --no-browser`), on SQLite in a fresh data dir and then on
PostgreSQL (DJANGO_DB=default, POSTGRE_* in a database created and dropped here). The admin comes from
`label-studio init --username --password --user-token --enable-legacy-api-token`; the annotators are made in
one `manage.py shell` run (one CLI start per user would take minutes), each with its legacy API token.
Overlap is Label Studio's default, one annotation per task: a task with two annotations was over-assigned.
"""
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from perf._services import drop_database, recreate_database, stop_process_group

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "perf" / ".envs" / "labelstudio"
VERSION = "1.23.2"
LABEL_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="quality" toName="text" choice="single">
    <Choice value="good"/><Choice value="bad"/>
  </Choices>
</View>"""
RESULT = [{"from_name": "quality", "to_name": "text", "type": "choices", "value": {"choices": ["good"]}}]
MAKE_USERS = """
import json, sys
from organizations.models import Organization
from users.models import User
org = Organization.objects.first()
org.legacy_api_tokens_enabled = True  # the client authenticates with 'Token <key>'
org.save()
out = []
for i in range({n}):
    user = User.objects.create_user(email=f"ann{{i:03d}}@perf.local", password="perf-pass-1")
    org.add_user(user)
    user.active_organization = org
    user.save(update_fields=["active_organization"])
    out.append(user.auth_token.key)
print("TOKENS" + json.dumps(out))
"""


IMPORT_PROJECT = """
import json, sys
from django.test import override_settings
from rest_framework.test import APIClient
from label_studio_sdk.label_interface import LabelInterface
from organizations.models import Organization
from projects.models import Project
from tasks.models import Annotation, Prediction, Task
from users.models import User
spec = json.load(open({spec!r}))
admin = User.objects.filter(email="admin@import.local").first()
if admin is None:
    admin = User.objects.create_superuser(email="admin@import.local", password="import-pass-1")
    org = Organization.create_organization(created_by=admin, title="import")
else:
    org = admin.active_organization
admin.active_organization = org
admin.save(update_fields=["active_organization"])
for email in spec["annotators"]:  # the people the file's completed_by names: members, as in a real project
    user = User.objects.filter(email=email).first() or User.objects.create_user(email=email, password="import-pass-1")
    org.add_user(user)
client = APIClient()
client.force_authenticate(admin)
made = client.post("/api/projects/", {{"title": "import check", "label_config": spec["config"]}}, format="json")
out = {{"project_status": made.status_code, "project_errors": made.json() if made.status_code != 201 else None}}
if made.status_code == 201:
    project = made.json()["id"]
    tasks = json.load(open(spec["tasks"]))
    li = LabelInterface(spec["config"])
    errors = []
    for i, task in enumerate(tasks):
        for kind in ("annotations", "predictions"):
            for j, holder in enumerate(task.get(kind, [])):
                for error in li.validate_prediction(holder, return_errors=True) or []:
                    errors.append(f"task {{i}} {{kind}}[{{j}}]: {{error}}")
    done = client.post(f"/api/projects/{{project}}/import?commit_to_project=true", tasks, format="json")
    out.update(import_status=done.status_code, response=done.json(), validation_errors=errors)
    shown = client.get(f"/api/projects/{{project}}/export?exportType=JSON")
    exported = json.loads(b"".join(shown.streaming_content) if shown.streaming else shown.content) \
        if shown.status_code == 200 else []
    out.update(tasks=Task.objects.filter(project_id=project).count(),
               annotations=Annotation.objects.filter(project_id=project).count(),
               predictions=Prediction.objects.filter(project_id=project).count(),
               per_annotator={{u.email: Annotation.objects.filter(project_id=project, completed_by=u).count()
                              for u in User.objects.filter(email__in=spec["annotators"])}},
               exported_tasks=len(exported),
               exported_annotations=sum(len(t.get("annotations", [])) for t in exported),
               exported_results=sum(len(a.get("result", [])) for t in exported for a in t.get("annotations", [])))
print("IMPORTED" + json.dumps(out))
"""


def initialized_data_dir(exe, template):
    """A data dir where `label-studio init` has run (its migrations take minutes): made once under `template`,
    copied for each use by the caller."""
    if (template / "label_studio.sqlite3").is_file():
        return template
    template.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(LABEL_STUDIO_BASE_DATA_DIR=str(template), LOG_LEVEL="WARNING")
    done = subprocess.run([str(exe), "init", "--username", "admin@init.local", "--password", "init-pass-1",
                           "--data-dir", str(template)], env=env, cwd=template, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode:
        shutil.rmtree(template, ignore_errors=True)
        raise RuntimeError(f"label-studio init failed: {(done.stdout + done.stderr)[-1500:]}")
    return template


def import_project(config, tasks_path, annotators, data_dir, workdir):
    """Label Studio's own import API, in its process, on the project our export describes: the project made with
    `config`, the annotators (emails) made members, `tasks_path` imported; returns what Label Studio reports and
    holds (status codes, errors, counts per annotator, its own export's counts)."""
    workdir = Path(workdir)
    spec = workdir / "spec.json"
    spec.write_text(json.dumps({"config": config, "tasks": str(tasks_path), "annotators": annotators}))
    package = next((VENV / "lib").glob("python3*/site-packages/label_studio"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(LABEL_STUDIO_BASE_DATA_DIR=str(data_dir), LOG_LEVEL="WARNING", SENTRY_DSN="",
               DJANGO_SETTINGS_MODULE="core.settings.label_studio")
    done = subprocess.run([str(VENV / "bin" / "python"), "manage.py", "shell", "-c",
                           IMPORT_PROJECT.format(spec=str(spec))], env=env, cwd=package, capture_output=True,
                          text=True, timeout=900)
    line = next((x for x in done.stdout.splitlines() if x.startswith("IMPORTED")), None)
    if line is None:
        raise RuntimeError(f"the import in Label Studio failed: {(done.stdout + done.stderr)[-3000:]}")
    return json.loads(line[len("IMPORTED"):])


def install():
    """The venv and label-studio==VERSION; returns the `label-studio` executable (raises with pip's tail)."""
    exe = VENV / "bin" / "label-studio"
    if exe.exists():
        return exe
    subprocess.run(["python3", "-m", "venv", str(VENV)], check=True)
    done = subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", f"label-studio=={VERSION}", "sentry-sdk<3"],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"pip install label-studio=={VERSION} failed: {done.stderr[-1500:]}")
    return exe


class LabelStudio:
    def __init__(self, exe, db, workdir, free_port, wait_until_up):
        self.exe, self.db, self.workdir = exe, db, Path(workdir)
        self.data_dir = self.workdir / f"data-{db}"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.pg_name = f"ls_perf_{os.getpid()}"
        self.pg_url = f"postgresql://postgres@127.0.0.1:5432/{self.pg_name}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
        self.env.update(LABEL_STUDIO_BASE_DATA_DIR=str(self.data_dir), LOG_LEVEL="WARNING",
                        PATH=f"{VENV / 'bin'}:{os.environ['PATH']}")
        if db == "postgresql":
            recreate_database(self.pg_url)
            self.env.update(DJANGO_DB="default", POSTGRE_HOST="127.0.0.1", POSTGRE_PORT="5432",
                            POSTGRE_USER="postgres", POSTGRE_PASSWORD="", POSTGRE_NAME=self.pg_name)
        self.admin_token = secrets.token_hex(20)
        self.cli("init", "--username", "admin@perf.local", "--password", "perf-pass-1", "--user-token",
                 self.admin_token, "--enable-legacy-api-token", timeout=600)
        self.log = open(self.workdir / f"labelstudio-{db}.log", "w")  # noqa: SIM115 -- open while the server runs
        self.proc = subprocess.Popen([str(exe), "start", "--no-browser", "--port", str(self.port),
                                      "--internal-host", "127.0.0.1"], env=self.env, cwd=self.workdir,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        if not wait_until_up(f"{self.base}/api/projects/", self.proc, timeout=300):
            self.stop()
            raise RuntimeError(f"label-studio start ({db}) did not answer: "
                               f"{(self.workdir / f'labelstudio-{db}.log').read_text()[-1500:]}")

    def cli(self, *args, timeout=300):
        done = subprocess.run([str(self.exe), *args, "--data-dir", str(self.data_dir)], env=self.env,
                              cwd=self.workdir, capture_output=True, text=True, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"label-studio {args[0]} failed: {(done.stdout + done.stderr)[-1500:]}")
        return done.stdout

    def make_annotators(self, n):
        package = next((VENV / "lib").glob("python3*/site-packages/label_studio"))
        done = subprocess.run([str(VENV / "bin" / "python"), "manage.py", "shell", "-c", MAKE_USERS.format(n=n)],
                              env={**self.env, "DJANGO_SETTINGS_MODULE": "core.settings.label_studio"},
                              cwd=package, capture_output=True, text=True, timeout=600)
        line = next((x for x in done.stdout.splitlines() if x.startswith("TOKENS")), None)
        if line is None:
            raise RuntimeError(f"creating annotators failed: {(done.stdout + done.stderr)[-1500:]}")
        return json.loads(line[len("TOKENS"):])

    def stop(self):
        if getattr(self, "proc", None):
            stop_process_group(self.proc)
        if getattr(self, "log", None):
            self.log.close()
        if self.db == "postgresql":
            drop_database(self.pg_url)


def run_labelstudio(args, *, client_base, levels, run_level):
    """One row per (database, level); a database whose install or start fails gets a row saying why."""
    import requests
    from annotator_load import free_port, wait_until_up

    class LabelStudioClient(client_base):
        """GET /api/projects/{id}/next/ (404 = nothing left) -> POST /api/tasks/{id}/annotations/."""

        def __init__(self, base, token, project_id):
            super().__init__(base, token)
            self.project_id = project_id

        def next(self):
            response = self.call("GET", f"/api/projects/{self.project_id}/next/")
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise RuntimeError(f"next: {response.status_code} {response.text[:200]}")
            return response.json()["id"]

        def submit(self, task_id):
            response = self.call("POST", f"/api/tasks/{task_id}/annotations/",
                                 json={"result": RESULT, "lead_time": 1.0, "project": self.project_id})
            return response.status_code == 201

    rows = []
    try:
        exe = install()
    except Exception as error:  # noqa: BLE001 (reported as a row)
        return [{"target": "labelstudio", "error": str(error)[-1500:]}]
    for db in args.ls_db.split(","):
        workdir = Path(tempfile.mkdtemp(prefix=f"ls-{db}-", dir=ROOT / "perf" / "out"))
        server = None
        try:
            server = LabelStudio(exe, db, workdir, free_port, wait_until_up)
            plan = levels(args, k=1)
            tokens = server.make_annotators(max(users or args.open_users for _, users, _, _ in plan))
            admin = requests.Session()
            admin.headers["Authorization"] = f"Token {server.admin_token}"
            print(f"# Label Studio {VERSION} ({db}): Django runserver via `label-studio start`, overlap 1", flush=True)
            for name, users, rate, items in plan:
                items = args.ls_items or items
                people = users or args.open_users
                made = admin.post(f"{server.base}/api/projects/", json={
                    "title": f"load {name}", "label_config": LABEL_CONFIG, "maximum_annotations": 1}, timeout=60)
                made.raise_for_status()
                project = made.json()["id"]
                tasks = [{"data": {"text": f"hello {i}\nanswer {i}"}} for i in range(items)]
                admin.post(f"{server.base}/api/projects/{project}/import", json=tasks, timeout=300).raise_for_status()
                clients = [LabelStudioClient(server.base, t, project) for t in tokens[:people]]
                before = os.getloadavg()
                result = run_level(clients, users, rate, args, server.proc.pid, items, 1)
                export = admin.get(f"{server.base}/api/projects/{project}/export", params={"exportType": "JSON"},
                                   timeout=300)
                export.raise_for_status()
                per_task = Counter(len(t.get("annotations", [])) for t in export.json())
                row = result.summary(target=f"labelstudio-{db}", tasks=items,
                                     load_before=[round(x, 2) for x in before],
                                     load_after=[round(x, 2) for x in os.getloadavg()],
                                     over_assigned=sum(n for count, n in per_task.items() if count > 1),
                                     annotations_per_task={str(k): v for k, v in sorted(per_task.items())})
                rows.append(row)
                print(json.dumps(row), flush=True)
        except Exception as error:  # noqa: BLE001 (reported as a row; the other side still runs)
            rows.append({"target": f"labelstudio-{db}", "error": str(error)[-1500:]})
            print(json.dumps(rows[-1]), flush=True)
        finally:
            if server:
                server.stop()
            shutil.rmtree(workdir, ignore_errors=True)
    return rows
