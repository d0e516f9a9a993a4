"""pyproject.toml declares what the code needs; requirements.txt is the lock that satisfies it."""
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def pinned():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_every_dependency_is_pinned_in_the_lock_within_its_range():
    pins = pinned()
    declared = PROJECT["project"]["dependencies"] + PROJECT["project"]["optional-dependencies"]["test"]
    for text in declared:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name == "torch":  # installed before the lock, CPU or CUDA build (bin/setup, README)
            assert requirement.specifier.contains("2.13.0"), text
            continue
        assert name in pins, f"{text} is not pinned in requirements.txt"
        assert requirement.specifier.contains(pins[name]), f"requirements.txt pins {name}=={pins[name]}, outside {text}"


def test_the_package_list_is_every_app():
    include = PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    found = {name.split(".")[0] for name in find_packages(str(ROOT), include=include)}
    apps = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "perf"}
    assert found == apps
