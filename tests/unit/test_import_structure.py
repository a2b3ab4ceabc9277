"""The code's structure: no import cycle between the project's modules, the domain layer independent of
the REST API, and no module too long to read in one go."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("controlplane", "mirrors", "mirrorcore", "spark_runtime", "devstack", "frontend", "bench")
# The only control-plane modules that start local brokers, Redis or Hadoop: the development commands.
DEVSTACK_USERS = {"mirrors.services.demo", "mirrors.management.commands.demo",
                  "mirrors.management.commands.devstack", "controlplane.infra.class_archive"}
DOMAIN = ("mirrors.services", "mirrors.interchange", "mirrors.models")
API = "mirrors.api"
MAX_LINES = 400


def _modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `packages`."""
    modules = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(module: str, path: Path) -> Iterator[tuple[str, bool]]:
    """(imported name, inside a function) for every import of the module, `if TYPE_CHECKING:` blocks aside.

    `from a import b` yields `a.b`: b may be a module.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                yield from ((alias.name, inner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package
                    for _ in range(child.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                yield from ((f"{base}.{alias.name}", inner) for alias in child.names)
            yield from walk(child, inner)

    yield from walk(ast.parse(path.read_text(), str(path)), False)


def _graph(modules: dict[str, Path]) -> dict[str, dict[str, bool]]:
    """module -> {module it imports: whether only inside functions}, within `modules`."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, bool]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for name, in_function in _imports(module, path):
            target = resolve(name)
            if target and target != module:
                edges[target] = edges.get(target, True) and in_function
    return graph


def _cycles(graph: dict[str, dict[str, bool]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(graph[successor])))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(component: list[str], graph: dict[str, dict[str, bool]]) -> str:
    edges = [f"  {a} -> {b}{' (inside a function)' if graph[a][b] else ''}"
             for a in component for b in sorted(graph[a]) if b in component]
    return "\n".join([", ".join(component), *edges])


def test_the_project_has_no_import_cycle():
    graph = _graph(_modules())
    cycles = _cycles(graph)
    assert not cycles, "import cycles (move what both sides need into a module of its own):\n" + "\n".join(
        _describe(component, graph) for component in cycles)


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b": False}, "b": {"c": False}, "c": {"a": True}, "d": {"a": False}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert "c -> a (inside a function)" in _describe(["a", "b", "c"], graph)


def test_the_domain_does_not_import_the_rest_api():
    modules = _modules(("mirrors",))
    offenders = [f"{module} imports {name}" for module, path in modules.items() if module.startswith(DOMAIN)
                 for name, _ in _imports(module, path) if name == API or name.startswith(f"{API}.")]
    assert not offenders, "the domain layer must not depend on the REST API:\n" + "\n".join(offenders)


def _third_party_imports(package: str) -> list[tuple[str, str]]:
    """(module, imported top-level name) for every import in `package`, function-level ones included."""
    return [(module, name.split(".")[0]) for module, path in _modules((package,)).items()
            for name, _ in _imports(module, path)]


def test_the_library_imports_neither_spark_nor_django_nor_the_applications():
    refused = {"pyspark", "py4j", "django", "rest_framework", "celery",
               "spark_runtime", "controlplane", "mirrors", "frontend", "bench"}
    offenders = sorted({f"{module} imports {top}" for module, top in _third_party_imports("mirrorcore")
                        if top in refused})
    assert not offenders, "mirrorcore is the library both sides share:\n" + "\n".join(offenders)


def test_the_spark_application_imports_no_django_nor_the_control_plane():
    refused = {"django", "rest_framework", "celery", "controlplane", "mirrors", "frontend"}
    offenders = sorted({f"{module} imports {top}" for module, top in _third_party_imports("spark_runtime")
                        if top in refused})
    assert not offenders, "spark_runtime runs inside spark-submit, without Django:\n" + "\n".join(offenders)


def test_the_control_plane_runs_the_spark_application_without_importing_it():
    offenders = sorted({f"{module} imports {top}" for package in ("controlplane", "mirrors", "frontend")
                        for module, top in _third_party_imports(package) if top == "spark_runtime"})
    assert not offenders, "the control plane shares mirrorcore with the application, not its code:\n" + "\n".join(
        offenders)


def test_production_code_does_not_start_development_infrastructure():
    offenders = sorted({f"{module} imports {top}" for package in ("controlplane", "mirrors", "frontend")
                        for module, top in _third_party_imports(package)
                        if top == "devstack" and module not in DEVSTACK_USERS})
    assert not offenders, "devstack is for development, tests and the demo:\n" + "\n".join(offenders)


def test_no_module_is_longer_than_the_limit():
    paths = [path for package in (*PACKAGES, "tests") for path in (ROOT / package).rglob("*.py")
             if "migrations" not in path.parts]  # generated by Django
    long = sorted(f"{path.relative_to(ROOT)}: {lines} lines" for path in paths
                  if (lines := len(path.read_text().splitlines())) > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines (split them along a seam):\n" + "\n".join(long)
