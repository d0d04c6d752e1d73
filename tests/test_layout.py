"""The package layout rules of CONTRIBUTING.md, read from the source with ``ast``.

Imports run one way, through the families in ``ORDER``; no two modules import each other,
directly or through others; no hand-written module grows past ``MAX_LINES``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Families in import order: a module may import its own family and those before it.
ORDER = (
    "core",
    "profile",
    "profile_kb",
    "runtime",
    "environment",
    "durable",
    "provider",
    "session",
    "candidate",
    "evaluator",
    "testing",
    "conformance",
    "cli",
)
GENERATED = {"agent_interface"}  # the root export table, written by scripts/
MAX_LINES = 650


def _module_name(src: Path, path: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(src: Path) -> dict[str, Path]:
    return {_module_name(src, path): path for path in sorted((src / "agent_interface").rglob("*.py"))}


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ORDER else None


def _imports(modules: dict[str, Path], module: str) -> Iterator[tuple[str, int]]:
    """Every package module ``module`` imports (at any depth of its code) and the line."""
    path = modules[module]
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            targets = [stem, *(f"{stem}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            if target in modules:
                yield target, node.lineno


def order_violations(src: Path) -> list[str]:
    """Imports against the family order, as ``file:line imports module``."""
    modules = _modules(src)
    against = []
    for module in modules:
        family = _family(module)
        if family is None:
            continue
        for target, line in _imports(modules, module):
            if target in GENERATED and module.startswith("agent_interface.cli"):
                continue  # the CLI reads __version__ from the root
            target_family = _family(target)
            if target_family is None or ORDER.index(target_family) > ORDER.index(family):
                against.append(f"{modules[module].relative_to(src)}:{line} imports {target}")
    return against


def import_cycles(src: Path) -> list[list[str]]:
    """Strongly connected components (Tarjan) of more than one module, or a self-import."""
    modules = _modules(src)
    # The generated root only names modules for lazy loading; it is no edge of the graph.
    graph = {
        module: sorted({t for t, _ in _imports(modules, module) if t not in GENERATED})
        for module in modules
        if module not in GENERATED
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return cycles


# The evaluator's sub-families, in the order of its flow: a module imports its own
# sub-family and those before it (the family's own ``__init__`` only names them lazily).
EVALUATOR_ORDER = (
    "git", "verify", "author", "images", "egress", "process", "container", "gateway", "harness", "run",
    "experiment",
)


def evaluator_order_violations(src: Path) -> list[str]:
    """Imports against :data:`EVALUATOR_ORDER`, as ``file:line imports module``."""
    modules = _modules(src)

    def sub(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "evaluator" else None

    against = []
    for module in modules:
        own = sub(module)
        if own is None:
            continue
        if module.count(".") == 2 and modules[module].name != "__init__.py":
            against.append(f"{modules[module].relative_to(src)}: a loose evaluator module")
            continue
        if own not in EVALUATOR_ORDER:
            against.append(f"{modules[module].relative_to(src)}: sub-family {own} is not in the order")
            continue
        for target, line in _imports(modules, module):
            target_sub = sub(target)
            if target_sub in EVALUATOR_ORDER and EVALUATOR_ORDER.index(target_sub) > EVALUATOR_ORDER.index(own):
                against.append(f"{modules[module].relative_to(src)}:{line} imports {target}")
    return against


def test_the_evaluator_sub_families_follow_the_flow() -> None:
    against = evaluator_order_violations(SRC)
    assert not against, "evaluator imports against the flow:\n" + "\n".join(against)


def test_the_flow_check_catches_an_upward_evaluator_import(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "evaluator/__init__.py": "",
            "evaluator/loose.py": "",
            "evaluator/git/__init__.py": "",
            "evaluator/git/a.py": "from agent_interface.evaluator.run.b import x\n",
            "evaluator/run/__init__.py": "",
            "evaluator/run/b.py": "from agent_interface.evaluator.git.a import y\n",
        },
    )
    assert evaluator_order_violations(src) == [
        "agent_interface/evaluator/git/a.py:1 imports agent_interface.evaluator.run.b",
        "agent_interface/evaluator/loose.py: a loose evaluator module",
    ]


def test_every_module_belongs_to_a_family() -> None:
    loose = [
        m for m in _modules(SRC)
        if _family(m) is None and m not in GENERATED and m != "agent_interface.__main__"
    ]
    assert not loose, f"modules outside the families of CONTRIBUTING.md: {loose}"


def test_imports_follow_the_family_order() -> None:
    against = order_violations(SRC)
    assert not against, "imports against the family order:\n" + "\n".join(against)


def test_no_import_cycles() -> None:
    cycles = import_cycles(SRC)
    assert not cycles, f"import cycles: {cycles}"


def test_no_hand_written_module_is_too_long() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for module, path in _modules(SRC).items()
        if module not in GENERATED
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"split these by concept (over {MAX_LINES} lines): {long}"


# The wire contract describes; it does not act. These standard modules read or write files,
# run processes, open sockets or databases: what uses them belongs in ``evaluator``.
ACTING_MODULES = frozenset({
    "asyncio", "fcntl", "ftplib", "glob", "http", "io", "mmap", "multiprocessing", "os", "pathlib",
    "pty", "resource", "select", "selectors", "shutil", "signal", "smtplib", "socket", "socketserver",
    "sqlite3", "ssl", "subprocess", "tarfile", "tempfile", "threading", "urllib", "zipfile",
})
PURE_FAMILIES = ("candidate",)


def acting_imports(src: Path, families: tuple[str, ...] = PURE_FAMILIES) -> list[str]:
    """Imports of :data:`ACTING_MODULES` (or ``open``) in ``families``, as ``file:line name``."""
    found = []
    for module, path in _modules(src).items():
        if _family(module) not in families:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                names = ["open"]
            else:
                continue
            for name in names:
                if name == "open" or name.split(".")[0] in ACTING_MODULES:
                    found.append(f"{path.relative_to(src)}:{node.lineno} {name}")
    return found


def test_the_wire_contract_families_do_no_io() -> None:
    found = acting_imports(SRC)
    assert not found, "I/O in a wire-contract family (move it to evaluator):\n" + "\n".join(found)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "agent_interface" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/a.py": "def f():\n    from agent_interface.provider.b import g\n",
            "provider/__init__.py": "",
            "provider/b.py": "from agent_interface.core.a import f\n",
            "provider/c.py": "from .b import x\n",
        },
    )
    assert order_violations(src) == ["agent_interface/core/a.py:2 imports agent_interface.provider.b"]
    assert import_cycles(src) == [["agent_interface.core.a", "agent_interface.provider.b"]]


def test_the_checks_accept_downward_imports(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/a.py": "X = 1\n",
            "provider/__init__.py": "",
            "provider/b.py": "from agent_interface.core.a import X\nfrom . import c\n",
            "provider/c.py": "from ..core import a\n",
        },
    )
    assert order_violations(src) == []
    assert import_cycles(src) == []


def test_the_io_check_catches_a_process_a_socket_and_a_file(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "candidate/__init__.py": "",
            "candidate/a.py": "import subprocess\nfrom socket import socket\n",
            "candidate/b.py": "def f():\n    import sqlite3.dbapi2\n    return open('x')\n",
            "candidate/c.py": "import hashlib\nfrom importlib import resources\n",
            "evaluator/__init__.py": "",
            "evaluator/d.py": "import os\n",
        },
    )
    assert acting_imports(src) == [
        "agent_interface/candidate/a.py:1 subprocess",
        "agent_interface/candidate/a.py:2 socket",
        "agent_interface/candidate/b.py:2 sqlite3.dbapi2",
        "agent_interface/candidate/b.py:3 open",
    ]
