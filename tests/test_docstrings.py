"""Every public class and function has a docstring of its own, and the API reference
(``mkdocs.yml``, ``docs/api/``) covers every public module.

Public: the package root's names and those of the documented subpackages. A class whose
``__doc__`` is inherited (``inspect.getdoc`` would show the base class's text) has none.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import agent_interface

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ("profile_kb", "testing", "testing.strategies", "conformance", "evaluator")


def public_objects() -> dict[str, Any]:
    """Qualified public name -> object, each object once (its first public name)."""
    found: dict[int, tuple[str, Any]] = {}
    for name in agent_interface.__all__:
        value = getattr(agent_interface, name)
        found.setdefault(id(value), (f"agent_interface.{name}", value))
    for package in SUBPACKAGES:
        module = importlib.import_module(f"agent_interface.{package}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            found.setdefault(id(value), (f"agent_interface.{package}.{name}", value))
    return dict(found.values())


def _own_doc(value: Any) -> str | None:
    doc = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
    return doc if isinstance(doc, str) and doc.strip() else None


def undocumented() -> tuple[list[str], list[str]]:
    """Public classes and functions without a docstring of their own."""
    classes, functions = [], []
    for name, value in public_objects().items():
        if inspect.isclass(value) and _own_doc(value) is None:
            classes.append(name)
        elif inspect.isfunction(value) and _own_doc(value) is None:
            functions.append(name)
    return sorted(classes), sorted(functions)


def test_every_public_class_and_function_has_its_own_docstring() -> None:
    classes, functions = undocumented()
    assert classes == [], f"{len(classes)} classes without a docstring of their own"
    assert functions == [], f"{len(functions)} functions without a docstring"


def test_the_checker_sees_inherited_text_as_missing() -> None:
    class Base:
        """Base text."""

    class Derived(Base):
        pass

    assert inspect.getdoc(Derived) == "Base text."
    assert _own_doc(Derived) is None


def test_every_public_module_is_in_the_api_reference() -> None:
    pages = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "docs" / "api").glob("*.md"))
    documented = set(re.findall(r"^::: (agent_interface[\w.]*)$", pages, flags=re.M))
    families = [
        name
        for name in ("core", "profile", "profile_kb", "runtime", "environment", "durable", "provider",
                     "session", "candidate", "evaluator", "testing", "conformance")
        if (ROOT / "src" / "agent_interface" / name).is_dir()
    ]
    expected = set()
    for family in families:
        package = importlib.import_module(f"agent_interface.{family}")
        for info in pkgutil.walk_packages(package.__path__, f"agent_interface.{family}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                expected.add(info.name)
    assert sorted(expected - documented) == []
    assert sorted(documented - expected) == []


def test_every_api_page_is_in_the_site_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        assert f"api/{page.name}" in config, page.name


def test_the_readme_has_no_relative_links() -> None:
    # The README is also the package index page, where a relative link breaks.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]+)\)", readme)
    assert [target for target in targets if not target.startswith(("https://", "http://", "#"))] == []


def test_contributing_points_inside_the_repository() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "../" not in contributing
    assert "/work/" not in contributing
