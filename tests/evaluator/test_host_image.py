"""The local image: host executables pinned by content."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.exact_process import CreateAgentExactProcessEnvironmentInput
from agent_interface.evaluator import LocalHostImage


def _executable(path: Path, content: bytes) -> str:
    path.write_bytes(content)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


def test_reference_is_a_pinned_image_and_depends_on_content(tmp_path: Path) -> None:
    a = _executable(tmp_path / "a", b"one")
    image = LocalHostImage([a])
    assert image.reference.startswith("local-host@sha256:")
    accepted = CreateAgentExactProcessEnvironmentInput.parse_wire(
        {"image": image.reference, "egress": {"mode": "blocked"}, "maxLifetimeMs": 1,
         "resources": {"cpu": 1, "memoryMb": 1, "diskMb": 1}, "metadata": {}, "idempotencyKey": "k"}
    )
    assert accepted.image == image.reference
    assert LocalHostImage([a]).reference == image.reference
    _executable(tmp_path / "a", b"two")
    assert LocalHostImage([a]).reference != image.reference


def test_resolution_and_refusals(tmp_path: Path) -> None:
    a = _executable(tmp_path / "a", b"one")
    image = LocalHostImage([a])
    assert image.resolve(a, {}) == (a, os.path.realpath(a))
    assert image.resolve("a", {"PATH": f"relative:{tmp_path}"})[0] == a
    for executable, env in ((str(tmp_path / "b"), {}), ("a", {"PATH": "relative"}), ("x/a", {"PATH": str(tmp_path)})):
        with pytest.raises(ContractError) as error:
            image.resolve(executable, env)
        assert _code(error) == "exact_process_executable_not_in_image"


def test_changed_bytes_are_refused_at_resolution(tmp_path: Path) -> None:
    a = _executable(tmp_path / "a", b"one")
    image = LocalHostImage([a])
    _executable(tmp_path / "a", b"changed")
    with pytest.raises(ContractError) as error:
        image.resolve(a, {})
    assert _code(error) == "exact_process_image_changed"


def test_a_retargeted_link_is_refused(tmp_path: Path) -> None:
    one = _executable(tmp_path / "one", b"one")
    _executable(tmp_path / "two", b"two")
    link = tmp_path / "tool"
    os.symlink(one, link)
    image = LocalHostImage([str(link)])
    link.unlink()
    os.symlink(tmp_path / "two", link)
    with pytest.raises(ContractError) as error:
        image.resolve(str(link), {})
    assert _code(error) == "exact_process_image_changed"


def test_touched_but_identical_bytes_are_accepted(tmp_path: Path) -> None:
    a = _executable(tmp_path / "a", b"one")
    image = LocalHostImage([a])
    copy = tmp_path / "copy"
    shutil.copy2(a, copy)
    os.replace(copy, a)  # a new inode with the same bytes
    assert image.resolve(a, {})[0] == a


@pytest.mark.parametrize("bad", ["relative", "/nonexistent/x", "/"])
def test_image_executables_must_be_absolute_executable_files(bad: str) -> None:
    with pytest.raises(ContractError) as error:
        LocalHostImage([bad])
    assert _code(error) == "local_image_executable"
    with pytest.raises(ContractError):
        LocalHostImage([])
