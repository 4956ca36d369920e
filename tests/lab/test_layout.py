"""The repository's import graph: no cycle in layer/, lab/, bench/, tools/, and lab's rooms import one way.

Read with ``ast`` from the source, every import counted, those inside functions too (a lazy import
still ties two modules: each needs the other to work). Names resolve the way each folder runs:
``layer/`` is on sys.path (``aws_keepalive.*``), ``lab`` and ``bench`` are packages at the repo
root, ``tools`` is a package of rooms, and a folder without ``__init__.py`` (bench/,
lab/standin/runtime/, a function's task folder) is a script folder whose files import each other by
bare name.

Lab's rooms (lab/__init__.py draws them): lab.experiments -> lab.standin | lab.services -> lab.net
-> lab. Tools' rooms (tools/__init__.py): tools.release | tools.deploy -> tools.packaging |
tools.interpreters | tools.docs | tools.lint. An import to a higher room, or between the rooms of
one floor, is a violation; imports between the two trees are not judged here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TREES = ("layer", "lab", "bench", "tools")
# lab's rooms and their floors: a module may import its own room, and rooms on lower floors.
FLOORS = {"lab": 0, "lab/net": 1, "lab/standin": 2, "lab/services": 2, "lab/experiments": 3,
          "tools": 0, "tools/interpreters": 1, "tools/packaging": 1, "tools/docs": 1, "tools/lint": 1,
          "tools/release": 2, "tools/deploy": 2}


def python_files(repo: Path) -> list[Path]:
    return sorted(path for tree in TREES for path in (repo / tree).rglob("*.py")
                  if "__pycache__" not in path.parts)


def module_names(repo: Path) -> dict[str, Path]:
    """Dotted name -> file, for the names that import it as a package module: ``lab.net.nat``,
    ``bench.rows``, ``aws_keepalive.patch`` (layer/ on sys.path)."""
    names = {}
    for path in python_files(repo):
        relative = path.relative_to(repo)
        parts = list(relative.with_suffix("").parts)
        if parts[0] == "layer":
            parts = parts[1:]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").exists()


def _resolve(name: str, source: Path, repo: Path, names: dict[str, Path]) -> Path | None:
    """The repository file an absolute import of ``name`` from ``source`` loads, or None (stdlib,
    third party)."""
    first = name.split(".")[0]
    if not _is_package(source.parent):  # a script folder: its siblings by bare name
        for candidate in (source.parent / (first + ".py"), source.parent / first / "__init__.py"):
            if candidate.exists():
                return candidate
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        found = names.get(".".join(parts[:end]))
        if found is not None:
            return found
    return None


def imports(path: Path, repo: Path, names: dict[str, Path]) -> set[Path]:
    """The repository files ``path`` imports, anywhere in it (top level, functions, branches)."""
    found = set()
    package = ".".join(names_of(path, repo, names)[:-1]) if _is_package(path.parent) else ""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        candidates = []
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # ``from a import b``: the module a.b when there is one, else a itself.
            candidates = [base + "." + alias.name if base else alias.name for alias in node.names] + [base]
        for name in candidates:
            if not name:
                continue
            target = _resolve(name, path, repo, names)
            if target is not None and target != path:
                found.add(target)
                if isinstance(node, ast.ImportFrom) and name != candidates[-1] and target.stem != "__init__":
                    break  # a.b resolved to a module: a itself adds nothing new
    return found


def names_of(path: Path, repo: Path, names: dict[str, Path]) -> list[str]:
    for name, file in names.items():
        if file == path:
            return name.split(".") + ([""] if path.name == "__init__.py" else [])
    return [path.stem]


def graph(repo: Path) -> dict[Path, set[Path]]:
    names = module_names(repo)
    return {path: imports(path, repo, names) for path in python_files(repo)}


def cycles(edges: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
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
                        out.append(sorted(component))
    return out


def room(path: Path, repo: Path) -> str | None:
    relative = path.relative_to(repo).as_posix()
    for name in sorted(FLOORS, key=len, reverse=True):
        if relative.startswith(name + "/"):
            return name
    return None


def upward(edges: dict[Path, set[Path]], repo: Path) -> list[str]:
    """Imports inside lab/ (or inside tools/) that go to a higher floor, or across the rooms of one
    floor."""
    out = []
    for source, targets in edges.items():
        here = room(source, repo)
        for target in targets:
            there = room(target, repo)
            if here is None or there is None or here == there or here.split("/")[0] != there.split("/")[0]:
                continue
            if FLOORS[there] > FLOORS[here] or (FLOORS[there] == FLOORS[here]):
                out.append("%s -> %s" % (source.relative_to(repo), target.relative_to(repo)))
    return sorted(out)


@pytest.mark.parametrize("tree", TREES)
def test_no_import_cycle(tree):
    """No two files of the tree need each other, directly or around a loop, imports in functions included."""
    found = [[str(p.relative_to(REPO)) for p in c] for c in cycles(graph(REPO))
             if any(p.is_relative_to(REPO / tree) for p in c)]
    assert found == []


def test_rooms_import_one_way():
    """lab.net imports nothing of the stand-in, services or experiments; standin and services not
    each other nor the experiments; tools' build, interpreters and docs nothing of release or
    deploy, nor each other (imports in functions included)."""
    assert upward(graph(REPO), REPO) == []


@pytest.mark.parametrize("tree", ("lab", "tools"))
def test_every_package_says_what_it_holds_and_may_import(tree):
    """Each package under lab/ and tools/ has an __init__ docstring, and every room's names what it may import."""
    for init in sorted((REPO / tree).rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert doc, init
        if init.parent.relative_to(REPO).as_posix() in FLOORS:
            assert "Imports" in doc or "import" in doc, init


def test_checks_see_a_cycle_and_an_upward_import_inside_functions(tmp_path):
    """The checks themselves: a cycle made of two lazy imports, and lab.net importing the stand-in
    from inside a function, are both found."""
    for folder in ("lab/net", "lab/standin", "bench", "layer", "tools"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    for package in ("lab", "lab/net", "lab/standin"):
        (tmp_path / package / "__init__.py").write_text('"""x"""\n')
    (tmp_path / "lab/net/wire.py").write_text("def f():\n    from lab.standin import env\n")
    (tmp_path / "lab/standin/env.py").write_text("from lab.net import wire\n")
    (tmp_path / "bench/a.py").write_text("def f():\n    import b\n")
    (tmp_path / "bench/b.py").write_text("def g():\n    from a import f\n")
    edges = graph(tmp_path)
    assert upward(edges, tmp_path) == ["lab/net/wire.py -> lab/standin/env.py"]
    found = sorted([str(p.relative_to(tmp_path)) for p in c] for c in cycles(edges))
    assert found == [["bench/a.py", "bench/b.py"], ["lab/net/wire.py", "lab/standin/env.py"]]
