"""What of a submission takes part in grading: the files a workspace grader runs its checks on.

A workspace task's checks run on the task's files as the submission left them, so anything
the submission adds or changes can take part in running them: a ``unittest.py`` that a
test runner imports instead of the standard library, a ``conftest.py`` or ``pytest.ini``
that the runner loads, a ``sitecustomize.py`` or ``.pth`` file, a planted ``__pycache__``
byte-code file that stands in for a restored test, a ``node_modules`` directory, a
``python3`` found along a workspace ``PATH``. Restoring the files a grader names does not
cover what a submission adds. :func:`graded_files` therefore starts from the task's own
files and takes from the submission only the changes the task allows:

* **protected** paths are always the task's: the grader document's ``restore`` entries
  (a file, or a directory and everything below it) and the grader's own files (an
  executable inside the task root, and every relative command argument naming a file or
  directory of the task) unless a ``solutionPaths`` entry is that very path (a wildcard
  never releases one);
* **solutionPaths** (glob patterns: ``*``, ``?`` and ``[...]`` within one path segment,
  ``**`` for any number of segments) lists what a solution may change, add or delete;
  without it a solution may change the task's existing files, but neither add nor delete one;
* **search-path hooks** are admitted only by a pattern that names them literally (a
  wildcard never admits one): a path through ``node_modules`` or ``__pycache__``; a
  ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py``, ``pytest.ini``,
  ``.pytest.ini``, ``tox.ini``, ``setup.cfg``, ``pyproject.toml``, ``package.json``,
  ``.npmrc``, ``pyvenv.cfg``; any ``.pth``, ``.pyc`` or ``.pyo`` file; and an *added*
  top-level module or package (one whose directory holds no ``__init__.py``) named like a
  standard-library module or a test runner (``pytest``, ``_pytest``, ``pluggy``, ``nose``,
  ...), with any suffix (``unittest.py``, ``unittest.cpython-311-x86_64-linux-gnu.so``), and
  an *added* module, extension or package named like a task module in the same directory
  (``test_calc/__init__.py`` or ``test_calc.cpython-311-x86_64-linux-gnu.so`` beside
  ``test_calc.py``: Python finds a package and an extension before a source file);
* entries the capture could not carry (links, devices, FIFOs, ``.git`` paths) never take
  part: the capture skips them and names them.

Every change not taken is undone (the task's bytes and mode put back, or the added file
removed) and recorded as a :class:`PolicyAction` in the grader's evidence, so the page of
the report says what was ignored and why. The search paths of the checks themselves are
pinned by the grader document's rules (:mod:`.task_grader`): a Python command runs
isolated, no search-path variable names the workspace.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "HOOK_FILES",
    "RUNNER_MODULES",
    "PolicyAction",
    "SubmissionPolicy",
    "graded_files",
    "pattern_refusal",
]

WorkspaceFiles = dict[str, tuple[int, bytes]]

HOOK_FILES: Final = frozenset({
    "conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg",
    "pyproject.toml", "package.json", ".npmrc", "pyvenv.cfg",
})
"""File names a test runner or interpreter loads by name from the directories it searches."""

_HOOK_DIRECTORIES: Final = frozenset({"node_modules", "__pycache__"})
_HOOK_SUFFIXES: Final = (".pth", ".pyc", ".pyo")

RUNNER_MODULES: Final = frozenset({
    "pytest", "_pytest", "py", "pluggy", "iniconfig", "nose", "nose2", "coverage", "hypothesis", "unittest2",
    "setuptools", "pkg_resources", "_distutils_hack", "pip", "packaging", "tomli", "typing_extensions",
})
"""Module names of test runners and their dependencies, shadowed as the standard library is."""

_SHADOWED: Final = frozenset(sys.stdlib_module_names) | RUNNER_MODULES
_MODULE_SUFFIXES: Final = (".py", ".pyc", ".pyo", ".pyw", ".so", ".pyd")
_MAX_PATTERNS: Final = 256
_PATTERN_RE: Final = re.compile(r"[^\0]{1,1024}")


@dataclass(frozen=True, slots=True)
class PolicyAction:
    """One change of the submission the grader did not take: the path, what was done
    (``restored``: the task's file put back; ``removed``: an added file left out;
    ``ignored``: an entry the capture skipped) and why."""

    path: str
    action: Literal["restored", "removed", "ignored"]
    reason: Literal["protected", "outside-solution-paths", "search-path-hook", "shadows-module", "unsupported-entry"]

    def to_wire(self) -> dict[str, str]:
        """The action as the grader's evidence records it."""
        return {"path": self.path, "action": self.action, "reason": self.reason}


def pattern_refusal(patterns: object) -> str | None:
    """Why ``patterns`` is not a valid ``solutionPaths`` list (``None`` when it is)."""
    if not isinstance(patterns, list) or len(patterns) > _MAX_PATTERNS:
        return f"solutionPaths lists at most {_MAX_PATTERNS} patterns"
    for pattern in patterns:
        if not isinstance(pattern, str) or _PATTERN_RE.fullmatch(pattern) is None:
            return "a solutionPaths pattern is a non-empty string"
        parts = pattern.split("/")
        if pattern.startswith("/") or any(part in ("", ".", "..") for part in parts):
            return "a solutionPaths pattern is a relative path without empty, '.' or '..' segments"
    return None


def _literal(segment: str) -> bool:
    return not any(character in segment for character in "*?[")


@dataclass(frozen=True, slots=True)
class SubmissionPolicy:
    """What a solution may change (``solution_paths``; ``None``: change existing files,
    neither add nor delete one) and what is the task's: ``restore`` always, ``grader_files`` unless a
    ``solutionPaths`` pattern names the path (both files, or directories by prefix)."""

    solution_paths: tuple[str, ...] | None
    restore: tuple[str, ...] = ()
    grader_files: tuple[str, ...] = ()

    def allows(self, path: str, hooks: frozenset[int] = frozenset()) -> bool:
        """Whether a ``solutionPaths`` pattern matches ``path`` with every segment index in
        ``hooks`` matched by a literal pattern segment."""
        if self.solution_paths is None:
            return False
        segments = tuple(path.split("/"))
        return any(_match(tuple(pattern.split("/")), segments, hooks) for pattern in self.solution_paths)

    def protects(self, path: str) -> bool:
        """Whether ``path`` is the task's: below a ``restore`` entry, or below one of the
        grader's own files that no ``solutionPaths`` entry names literally (a wildcard never
        releases one)."""
        named = self.solution_paths or ()
        return any(_below(path, entry) for entry in self.restore) or any(
            _below(path, entry) and entry not in named for entry in self.grader_files)


def _below(path: str, entry: str) -> bool:
    entry = entry.strip("/")
    return path == entry or path.startswith(entry + "/")


def _match(pattern: tuple[str, ...], path: tuple[str, ...], hooks: frozenset[int]) -> bool:
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(pattern):
            result = j == len(path)
        elif pattern[i] == "**":
            result = at(i + 1, j) or (j < len(path) and j not in hooks and at(i, j + 1))
        elif j == len(path):
            result = False
        else:
            segment = path[j]
            fits = pattern[i] == segment if j in hooks else fnmatch.fnmatchcase(segment, pattern[i])
            result = fits and (j not in hooks or _literal(pattern[i])) and at(i + 1, j + 1)
        memo[key] = result
        return result

    return at(0, 0)


def _module_name(segment: str, last: bool) -> str | None:
    if not last:
        return segment
    for suffix in _MODULE_SUFFIXES:
        if segment.endswith(suffix):
            return segment.split(".", 1)[0]
    return None


def _directories(files: Iterable[str]) -> frozenset[str]:
    return frozenset(path.rsplit("/", depth)[0] for path in files for depth in range(1, path.count("/") + 1))


def _task_module(task_files: Mapping[str, object], directory: str, module: str, path: str) -> bool:
    """Whether the task has a module or package ``module`` in ``directory`` (other than ``path``)."""
    prefix = f"{directory}/" if directory else ""
    return any(candidate in task_files and candidate != path
               for candidate in (f"{prefix}{module}.py", f"{prefix}{module}/__init__.py"))


def _hooks(path: str, added: bool, files: Mapping[str, object], task_directories: frozenset[str],
           task_files: Mapping[str, object]) -> tuple[frozenset[int], bool]:
    """The segment indexes of ``path`` that are search-path hooks, and whether one of them
    is a module shadowing (the rest are hook names); a directory the task already has is
    the task's layout, not a shadowing. An added module, extension or package with the name
    of a task module in the same directory (``test_calc/__init__.py`` or
    ``test_calc.cpython-311-x86_64-linux-gnu.so`` beside ``test_calc.py``: a package and an
    extension are found before a source file) shadows it wherever it is."""
    segments = path.split("/")
    last = len(segments) - 1
    hooks: set[int] = set()
    shadows = False
    for index, segment in enumerate(segments):
        if segment in _HOOK_DIRECTORIES and index < last:
            hooks.add(index)
    name = segments[last]
    if name in HOOK_FILES or name.endswith(_HOOK_SUFFIXES):
        hooks.add(last)
    if added:
        for index, segment in enumerate(segments):
            directory = "/".join(segments[:index])
            if index < last and "/".join(segments[: index + 1]) in task_directories:
                continue
            module = _module_name(segment, index == last)
            if module is None:
                continue
            if _task_module(task_files, directory, module, path):
                hooks.add(index)
                shadows = True
            elif f"{directory}/__init__.py".lstrip("/") in files:
                continue  # inside a regular package: a submodule shadows nothing else
            elif module in _SHADOWED:
                hooks.add(index)
                shadows = True
    return frozenset(hooks), shadows


def graded_files(base: Mapping[str, tuple[int, bytes]], result: Mapping[str, tuple[int, bytes]],
                 policy: SubmissionPolicy, skipped: Iterable[str] = ()) -> tuple[WorkspaceFiles, list[PolicyAction]]:
    """The files the checks run on: ``base`` with the changes of ``result`` that ``policy``
    allows, and the actions taken on the rest (``skipped``: entries the capture left out)."""
    files: WorkspaceFiles = dict(base)
    actions = [PolicyAction(path, "ignored", "unsupported-entry") for path in sorted(set(skipped))]
    task_directories = _directories(base)
    for path in sorted(set(base) | set(result)):
        old, new = base.get(path), result.get(path)
        if old == new:
            continue
        hooks, shadows = _hooks(path, old is None, result, task_directories, base)
        reason: Literal["protected", "outside-solution-paths", "search-path-hook", "shadows-module"] | None = None
        explicit = policy.allows(path, hooks)
        if policy.protects(path):
            reason = "protected"
        elif policy.solution_paths is None:
            if old is None or new is None:
                reason = "outside-solution-paths"
            elif hooks:
                reason = "shadows-module" if shadows else "search-path-hook"
        elif not policy.allows(path):
            reason = "outside-solution-paths"
        elif not explicit:
            reason = "shadows-module" if shadows else "search-path-hook"
        if reason is None:
            if new is None:
                files.pop(path, None)
            else:
                files[path] = new
        elif old is None:
            actions.append(PolicyAction(path, "removed", reason))
        else:
            actions.append(PolicyAction(path, "restored", reason))
    return files, actions
