"""Who imports whom among our packages, read from the source: every import statement wherever it stands (inside
functions too), and a module or app named by a literal string to importlib, __import__ or Django's app registry.
tests/core/test_imports.py checks the house with it; to look at it:

    python -m tests.core.import_graph [ROOT]    # each package, the packages it imports and where, first seen
"""
import ast
import sys
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
# Calls that reach a module or an app by name: import_module("a.b"), __import__("a"), apps.get_model("a", "M"),
# apps.get_model("a.M"), apps.get_app_config("a").
NAMED_BY_STRING = {"import_module", "__import__", "get_model", "get_app_config"}


def packages(root=ROOT):
    """Our top-level packages: the ones pyproject.toml installs."""
    include = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    return tuple(sorted(name.rstrip("*") for name in include))


def module_name(path, root=ROOT):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root=ROOT):
    """{dotted name: path} of every module of our packages, migrations left out."""
    return {module_name(path, root): path for package in packages(root) for path in (root / package).rglob("*.py")
            if "migrations" not in path.parts}


def imported(path, name):
    """(dotted name, line) of everything the module `name` at `path` imports: for `from a import b`, both `a` and
    `a.b` (b may be a module or a name in a)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")[:max(len(package.split(".")) - node.level + 1, 0)] if node.level else []
            module = ".".join(parts + ([node.module] if node.module else []))
            if module:
                yield module, node.lineno
            yield from ((f"{module}.{alias.name}".lstrip("."), node.lineno) for alias in node.names)
        elif isinstance(node, ast.Call) and _called(node.func) in NAMED_BY_STRING and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value, node.lineno


def _called(func):
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def module_graph(root=ROOT):
    """Module -> the modules of ours it imports."""
    found = modules(root)
    graph = nx.DiGraph()
    for name, path in found.items():
        graph.add_node(name)
        graph.add_edges_from((name, other) for other, _ in imported(path, name) if other in found and other != name)
    return graph


def package_graph(root=ROOT):
    """{package: {package it imports: "module:line" where first seen}}, ours only, a package's own imports left out."""
    ours = packages(root)
    graph = {package: {} for package in ours}
    for name, path in sorted(modules(root).items()):
        package = name.split(".")[0]
        for other, line in imported(path, name):
            top = other.split(".")[0]
            if top in ours and top != package:
                graph[package].setdefault(top, f"{name}:{line}")
    return graph


def main(root=ROOT):
    for package, imports in package_graph(root).items():
        print(f"{package} -> {', '.join(sorted(imports)) or 'nothing of ours'}")
        for other, where in sorted(imports.items()):
            print(f"    {other:<14} first at {where}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT)
