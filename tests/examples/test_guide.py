"""Every Python block of the provider authors' guide runs as written.

The blocks of one page run in order in one namespace (a page builds on its earlier
blocks), with ``examples/provider`` importable as the guide says. A block that defines
``test_*`` functions has them called, as pytest would.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
ALL_PAGES = sorted(GUIDE.glob("*.md"))
# Pages whose blocks write files run in a scratch directory by their own test.
OWN_RUNNER = {
    "candidates.md": "tests/examples/test_candidates_guide.py",
    "experiments-statistics.md": "tests/examples/test_statistics_guide.py",
    "images.md": "tests/examples/test_images_guide.py",
}
PAGES = [page for page in ALL_PAGES if page.name not in OWN_RUNNER]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` blocks of a Markdown page, in order."""
    return [match.group(1) for match in BLOCK.finditer(text)]


def test_the_guide_has_its_pages_and_every_fence_is_known() -> None:
    assert {page.name for page in PAGES} >= {"providers.md", "provider-kits.md"}
    assert all((ROOT / runner).is_file() for runner in OWN_RUNNER.values())
    for page in ALL_PAGES:
        fences = re.findall(r"^```(\S*)", page.read_text(encoding="utf-8"), re.MULTILINE)
        # openers are "python" (run here) or "sh"/"text" (not Python); closers are bare
        assert set(fences) <= {"python", "sh", "text", ""}, page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_python_block_runs(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert blocks, f"{page.name} has no Python block"
    module = types.ModuleType(f"guide_{page.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
    namespace = module.__dict__
    for index, block in enumerate(blocks):
        before = set(namespace)
        code = compile(block, f"{page.name}[block {index + 1}]", "exec")
        exec(code, namespace)
        for name in sorted(set(namespace) - before):
            if name.startswith("test_") and callable(namespace[name]):
                namespace[name]()


def test_every_name_in_the_toolkit_table_is_public_and_documented() -> None:
    import agent_interface
    import agent_interface.conformance

    text = (GUIDE / "providers.md").read_text(encoding="utf-8")
    table = text[text.index("| to ... | use |"):text.index("## The three objects")]
    names = {
        name
        for row in table.splitlines()[2:]
        if row.startswith("|")
        for name in re.findall(r"`([A-Za-z_]+)`", row.split("|")[2])
    }
    assert len(names) >= 20
    for name in sorted(names - {"agent_interface"}):
        home = agent_interface if name in agent_interface.__all__ else agent_interface.conformance
        assert name in home.__all__, f"{name} is not public"
        value = getattr(home, name)
        own = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
        assert (own or "").strip(), f"{name} has no docstring of its own"
