"""An OCI image holding Debian's ``python3.11`` (its whole standard library) and, optionally, the
official ``openai`` and ``anthropic`` SDKs copied from this virtual environment.

``python_sdk_image(directory, sdk=True)`` builds it (busybox for a shell-free ``/bin``, the
interpreter, the shared libraries it and its extensions load, ``/usr/lib/python3.11``
without tests and caches, and with ``sdk`` the SDKs and every package they import under
:data:`SDK_PATH`, which a launch names with ``PYTHONPATH``), imports it into a new
:class:`OciImageStore` and returns the store with the image's digests. The SDKs' compiled
extensions are CPython 3.11 ones, the interpreter's ABI.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import (
    Entry,
    busybox_files,
    files_entries,
    tar_layer,
    write_index_image,
)

PYTHON = Path("/usr/bin/python3.11")
STDLIB = Path("/usr/lib/python3.11")
SDK_PATH = "/opt/sdk"
IMAGE_NAME = "test/python"
_SKIP = ("test/", "idlelib/", "tkinter/", "ensurepip/", "lib2to3/", "turtledemo/", "config-3.11")


@dataclass(frozen=True)
class PythonImage:
    """The image in its store: index and host manifest digests, and the plan's container record."""

    store: OciImageStore
    index_digest: str
    manifest_digest: str

    def container(self) -> dict[str, object]:
        """The task's ``evaluatorTaskContainer`` selecting this image."""
        host = host_platform()
        return {"source": "evaluator-task-container", "image": IMAGE_NAME, "indexDigest": self.index_digest,
                "manifestDigest": self.manifest_digest,
                "platform": {"os": host.os, "architecture": host.architecture}}


def _libraries(binaries: list[str]) -> set[str]:
    found: set[str] = set()
    for binary in binaries:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            words = line.split()
            path = words[2] if "=>" in words and len(words) > 2 else (words[0] if words else "")
            if path.startswith("/"):
                found.add(path)
    return found


def _sdk_files() -> tuple[dict[str, bytes], list[str]]:
    """Every file of ``openai``, ``anthropic`` and what they require, under ``SDK_PATH``, and
    the host paths of their compiled extensions."""
    seen: set[str] = set()
    todo = ["openai", "anthropic"]
    files: dict[str, bytes] = {}
    extensions: list[str] = []
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in distribution.requires or []:
            if "extra ==" not in requirement:
                todo.append(re.split(r"[ ;<>=!~\[(]", requirement)[0])
        for file in distribution.files or []:
            path = Path(distribution.locate_file(file))
            relative = str(file)
            if relative.startswith("..") or "__pycache__" in relative or not path.is_file():
                continue
            files[f"{SDK_PATH.lstrip('/')}/{relative}"] = path.read_bytes()
            if path.suffix == ".so":
                extensions.append(str(path))
    return files, extensions


def python_sdk_image(directory: Path, *, sdk: bool = False) -> PythonImage:
    """Build the image in ``directory`` and import it into ``directory/store``."""
    files: dict[str, bytes | str] = dict(busybox_files())
    stdlib = [path for path in STDLIB.rglob("*") if path.is_file()
              and "__pycache__" not in path.parts and not str(path.relative_to(STDLIB)).startswith(_SKIP)]
    for path in stdlib:
        files[str(path).lstrip("/")] = path.read_bytes()
    binaries = [str(PYTHON), *(str(path) for path in stdlib if path.suffix == ".so")]
    if sdk:
        sdk_files, extensions = _sdk_files()
        files.update(sdk_files)
        binaries += extensions
    for library in _libraries(binaries):
        files[library.lstrip("/")] = Path(library).read_bytes()
    files[str(PYTHON).lstrip("/")] = PYTHON.read_bytes()
    files["usr/bin/python3"] = "->python3.11"
    executables = {str(PYTHON).lstrip("/")} | {name for name in files if "/ld-linux" in name}
    entries = [dataclasses.replace(entry, mode=0o755) if entry.name in executables else entry
               for entry in files_entries(files)]
    layer = tar_layer([*entries, Entry("tmp/", kind="dir", mode=0o1777)])
    host = host_platform()
    built = write_index_image(directory / "layout", {(host.os, host.architecture): [layer]}, tag="python")
    store = OciImageStore(directory / "store")
    store.import_layout(directory / "layout", name=IMAGE_NAME, tag="python")
    mine = built[(host.os, host.architecture)]
    assert mine.index_digest is not None
    return PythonImage(store, mine.index_digest, mine.manifest_digest)
