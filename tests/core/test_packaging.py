"""pyproject.toml declares what the code needs; requirements.txt (what the platform runs with) and
requirements-test.txt (the tests' tools on top) are the locks that satisfy it, and hold nothing more.

What a lock must hold is read from the installed packages' own metadata: the requirements of each
distribution, its markers and extras evaluated, followed from the declared dependencies down."""
import ast
import importlib.util
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from django.conf import settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RUNTIME = PROJECT["project"]["dependencies"]
TEST_TOOLS = PROJECT["project"]["optional-dependencies"]["test"]
APPS = tuple(name.rstrip("*") for name in PROJECT["tool"]["setuptools"]["packages"]["find"]["include"])
PLATFORM_LOCK, TEST_LOCK = ROOT / "requirements.txt", ROOT / "requirements-test.txt"
# Installed before the lock, the CPU or the CUDA build (bin/setup, docs/deployment.md "GPU workers"); what it pulls in
# differs between the two, so the locks may pin its requirements but need not.
TORCH = "torch"
# llama.cpp's server, for the API backend's tests: bin/setup-test installs it from its wheel cache with
# --no-deps, and requirements-test.txt pins what its server needs.
LLAMA_SERVER = "llama-cpp-python[server]"
# Declared, though no module of ours imports them.
NEEDED_WITHOUT_AN_IMPORT = {
    "accelerate": "transformers loads a GGUF checkpoint through it",
    "gguf": "transformers reads a GGUF checkpoint with it",
    "pytest-django": "a pytest plugin, loaded by pytest",
    "pytest-timeout": "a pytest plugin, loaded by pytest",
    "ruff": "the linter, run as a command by bin/test",
}


def name_of(text):
    return canonicalize_name(Requirement(text).name)


def pins(path):
    """{name: version} of a lock's `name==version` lines (comments and `-r` lines left out)."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            found[canonicalize_name(name)] = version.strip()
    return found


def closure(requirements, stop=()):
    """The names of the distributions that installing `requirements` brings, from the installed metadata,
    not followed below the names in `stop`."""
    extras_of, todo = {}, [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = set(requirement.extras)
        if name in extras_of and extras <= extras_of[name]:
            continue
        extras_of[name] = extras_of.get(name, set()) | extras
        if name in stop:
            continue
        try:
            needs = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed (bin/setup-test installs both locks)")
        for text in needs:
            needed = Requirement(text)
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra})
                                            for extra in extras_of[name] | {""}):
                todo.append(needed)
    return set(extras_of)


def test_every_dependency_is_pinned_in_the_locks_within_its_range():
    platform, test = pins(PLATFORM_LOCK), pins(TEST_LOCK)
    for text, lock in [(text, platform) for text in RUNTIME] + [(text, platform | test) for text in TEST_TOOLS]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name == TORCH:  # installed before the lock, CPU or CUDA build (bin/setup, docs/deployment.md)
            assert requirement.specifier.contains("2.13.0"), text
            continue
        assert name in lock, f"{text} is not pinned in {'requirements.txt' if lock is platform else 'either lock'}"
        assert requirement.specifier.contains(lock[name]), f"the lock pins {name}=={lock[name]}, outside {text}"


@pytest.mark.parametrize("name, locked", [("torch", "2.13.0"), ("transformers", None)])
def test_what_decides_the_scores_is_declared_at_the_locked_minor_version(name, locked):
    """An install from pyproject.toml alone gets the torch and transformers the lock was tested with, never a
    newer minor release that scores differently."""
    version = Version(locked or pins(PLATFORM_LOCK)[name])
    [specifier] = [Requirement(text).specifier for text in RUNTIME if name_of(text) == name]
    assert specifier.contains(str(version))
    assert not specifier.contains(f"{version.major}.{version.minor + 1}.0")


def test_the_platform_lock_holds_what_the_platform_installs_and_nothing_more():
    """bin/run installs requirements.txt: everything the declared dependencies bring, and none of the tests'
    tools."""
    needed = closure(RUNTIME, stop={TORCH}) - {TORCH}
    locked = set(pins(PLATFORM_LOCK))
    assert sorted(needed - locked) == [], "missing from requirements.txt"
    assert sorted(locked - needed - closure([TORCH])) == [], "in requirements.txt, but not needed to run"


def test_the_test_lock_adds_the_tests_tools():
    platform, test = set(pins(PLATFORM_LOCK)), set(pins(TEST_LOCK))
    assert sorted(platform & test) == [], "pinned in both locks"
    assert "-r requirements.txt" in TEST_LOCK.read_text().splitlines()  # one resolution for the two
    assert sorted(closure(TEST_TOOLS, stop={TORCH}) - {TORCH} - platform - test) == [], "missing from a lock"
    if importlib.util.find_spec("llama_cpp") is None:
        print("llama-cpp-python is not installed (bin/setup-test): its server's pins not checked")
        pytest.skip("llama-cpp-python is not installed (bin/setup-test): its server's pins not checked")
    server = closure([LLAMA_SERVER], stop={TORCH}) - {name_of(LLAMA_SERVER)}
    assert sorted(server - platform - test) == [], "llama.cpp's server needs these, pinned in no lock"
    assert sorted(test - closure(TEST_TOOLS) - server) == [], "in requirements-test.txt, but needed by nothing"


def test_the_package_list_is_every_app():
    include = PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    found = {name.split(".")[0] for name in find_packages(str(ROOT), include=include)}
    apps = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "perf"}
    assert found == apps


def imported_modules(paths):
    """{top-level module: first file importing it} of every absolute import in `paths` (function-level too)."""
    found = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def modules_named_in_settings():
    """Modules Django imports by their dotted names in the settings: apps, middleware, back ends, classes."""
    def dotted(value):
        if isinstance(value, str):
            return [value] if "." in value and " " not in value and "/" not in value else []
        if isinstance(value, dict):
            return [name for item in value.values() for name in dotted(item)]
        if isinstance(value, (list, tuple)):
            return [name for item in value for name in dotted(item)]
        return []

    names = [*settings.INSTALLED_APPS, *settings.MIDDLEWARE, *dotted(settings.REST_FRAMEWORK),
             *dotted(settings.STORAGES), *dotted(settings.CACHES), *dotted(settings.TEMPLATES),
             *(database["ENGINE"] for database in settings.DATABASES.values())]
    return {name.split(".")[0]: "config/settings.py" for name in names}


def third_party(modules):
    """{distribution: (module, where)} for the modules that are neither the standard library's nor ours."""
    distributions = metadata.packages_distributions()
    found = {}
    for module, where in sorted(modules.items()):
        if module in sys.stdlib_module_names or module in APPS or module in ("tests", "perf", "manage"):
            continue
        assert module in distributions, f"{where} imports {module}, which no installed distribution provides"
        for distribution in distributions[module]:
            found.setdefault(canonicalize_name(distribution), (module, where))
    return found


def code_imports():
    return third_party({**modules_named_in_settings(), **imported_modules(
        [ROOT / "manage.py", *(path for app in APPS for path in (ROOT / app).rglob("*.py"))])})


# Scripts the tests start in a tool's own venv (perf/_target_venvs.py), never imported here: what they import is
# that venv's, not ours to declare.
IN_ANOTHER_VENV = {ROOT / "tests" / "modeleval" / "inspect_log_writer.py"}


def imports_of_the_tests():
    return third_party(imported_modules(p for p in (ROOT / "tests").rglob("*.py") if p not in IN_ANOTHER_VENV))


def test_every_module_the_code_imports_is_declared():
    """An install from pyproject.toml alone brings every module the platform imports (what the tests import on
    top of it is in the `test` extra)."""
    runtime = {name_of(text) for text in RUNTIME}
    test = runtime | {name_of(text) for text in TEST_TOOLS}
    assert {f"{module} ({where})": name for name, (module, where) in code_imports().items()
            if name not in runtime} == {}
    assert {f"{module} ({where})": name for name, (module, where) in imports_of_the_tests().items()
            if name not in test} == {}


def test_every_declared_dependency_is_imported_or_says_why():
    imported = set(code_imports()) | set(imports_of_the_tests())
    declared = {name_of(text) for text in RUNTIME + TEST_TOOLS}
    assert sorted(declared - imported - set(NEEDED_WITHOUT_AN_IMPORT)) == []
    assert sorted(set(NEEDED_WITHOUT_AN_IMPORT) - declared) == []  # needed, but not declared
    assert sorted(set(NEEDED_WITHOUT_AN_IMPORT) & imported) == []  # said to be unimported, but imported
