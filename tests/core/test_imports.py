"""The house's import rules (ARCHITECTURE.md), read from the source by tests/core/import_graph.py: import
statements wherever they stand (inside functions too) and modules or apps named to importlib or Django's app
registry. `python -m tests.core.import_graph` prints the graph these tests read."""
import networkx as nx

from tests.core.import_graph import module_graph, package_graph, packages

TOP = "humanbaseline"  # what wires the apps together and runs the whole: it may import every app


def test_no_import_cycles_inside_the_apps():
    """No module of an app imports, directly or through others, a module that imports it back: the model-evaluation
    actions queue the task, the task calls the runner, and the runner writes through `modeleval.lifecycle`, never
    through the actions."""
    assert list(nx.simple_cycles(module_graph())) == []


def test_core_imports_nothing_of_ours():
    """core is the base every app imports (the error type, the API's error handler, SQL, the database backend):
    one import of an app from it, even inside a function, runs an arrow back up the house."""
    assert package_graph()["core"] == {}


def test_nothing_imports_the_top_app():
    assert {package: imports[TOP] for package, imports in package_graph().items() if TOP in imports} == {}
    assert TOP in packages()


# metrics and studies import nothing of ours; annotation and modeleval import benchmarks, never each other: the top
# app connects them where one reads the other's data (core.slots).
FORBIDDEN = {"metrics": packages(), "studies": packages(), "annotation": ("modeleval",), "modeleval": ("annotation",)}


def test_the_apps_import_in_the_stated_direction():
    graph = package_graph()
    assert {f"{package} imports {other}": graph[package][other] for package, others in FORBIDDEN.items()
            for other in others if other in graph[package]} == {}


def test_the_graph_sees_imports_wherever_they_stand(tmp_path):
    """An import inside a function or a method, and a module or app reached by its name, count as imports."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["core*", "annotation*", "modeleval*", "reports*", '
        '"humanbaseline*"]\n')
    for package in ("core", "annotation", "modeleval", "reports", "humanbaseline"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "core" / "late.py").write_text(
        "import importlib\n\nfrom django.apps import apps\n\nfrom . import late\n\n\n"
        "def labels():\n    from annotation.selectors import accepted_final_labels\n    return "
        "accepted_final_labels\n\n\n"
        "class Runs:\n    def start(self):\n        import modeleval.actions\n        return modeleval.actions\n\n\n"
        "def by_name():\n    return importlib.import_module('humanbaseline.apps'), apps.get_model('reports.Report')\n")
    graph = package_graph(tmp_path)
    assert graph["core"] == {"annotation": "core.late:9", "modeleval": "core.late:15",
                             "humanbaseline": "core.late:20", "reports": "core.late:20"}
