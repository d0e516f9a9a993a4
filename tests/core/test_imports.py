"""No module of an app imports, directly or through others, a module that imports it back (function-level
imports included): the model-evaluation actions queue the task, the task calls the runner, and the runner
writes through `modeleval.lifecycle`, never through the actions."""
import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("annotation", "benchmarks", "config", "core", "frontend", "metrics", "modeleval", "reports")


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path, name):
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def test_no_import_cycles_inside_the_apps():
    paths = {module_name(path): path for app in CHECKED for path in (ROOT / app).rglob("*.py")
             if "migrations" not in path.parts}
    graph = nx.DiGraph()
    for name, path in paths.items():
        graph.add_node(name)
        graph.add_edges_from((name, other) for other in imported(path, name) if other in paths and other != name)
    assert list(nx.simple_cycles(graph)) == []


# ARCHITECTURE.md: metrics imports nothing of ours; annotation and modeleval import benchmarks, never each
# other. The platform app (core) connects them where one must read the other's data (modeleval.human_labels).
FORBIDDEN = {"metrics": CHECKED, "annotation": ("modeleval",), "modeleval": ("annotation",)}


def test_the_apps_import_in_the_stated_direction():
    wrong = []
    for app, others in FORBIDDEN.items():
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = module_name(path)
            wrong += [f"{name} imports {other}" for other in imported(path, name)
                      if other.split(".")[0] in others and other.split(".")[0] != app]
    assert wrong == []
