"""The host probe observes each property on a real container; one missing omits exactProcess.

A wrapper around ``runc`` strips one protection from every ``config.json`` it is handed
(what a broken or misconfigured runtime would do): the probe must see it missing, name
it in ``reasons``, and the provider must then declare no ``exactProcess``. The
containers' init and probe programs are also assembled again from their documented
source and compared byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.container.static_programs import INIT_CODE, PROBE_CODE
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    cleanup_root,
    requires_runc,
    run,
    runc_ids,
    scratch_directory,
)

WRAPPER = """#!{python}
import json, os, sys
args = sys.argv[1:]
if "--bundle" in args:
    path = os.path.join(args[args.index("--bundle") + 1], "config.json")
    with open(path) as handle:
        config = json.load(handle)
    {strip}
    with open(path, "w") as handle:
        json.dump(config, handle)
os.execv({runc!r}, [{runc!r}, *args])
"""

STRIPPED = {
    "seccomp": ('config["linux"].pop("seccomp")', "the probe did not stay refused by seccomp"),
    "user namespace": (
        'config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"] if n["type"] != "user"]; '
        'config["linux"].pop("uidMappings"); config["linux"].pop("gidMappings")',
        "the user namespace mapping was not applied",
    ),
    "network namespace": (
        'config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"] if n["type"] != "network"]; '
        'config["mounts"] = [m for m in config["mounts"] if m["type"] != "sysfs"]',
        "the container shares the host's network namespace",
    ),
    "capabilities": (
        'config["process"]["capabilities"] = {k: ["CAP_KILL"] for k in ("bounding", "effective", "permitted")}',
        "a container process kept capabilities",
    ),
    "pids limit": ('config["linux"]["resources"].pop("pids")', "the cgroup pids limit was not applied"),
    "memory limit": ('config["linux"]["resources"].pop("memory")', "the cgroup memory limit was not applied"),
}


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    path = scratch_directory()
    try:
        yield path
    finally:
        cleanup_root(path)


@requires_runc
@pytest.mark.parametrize("stripped", sorted(STRIPPED))
def test_a_protection_the_runtime_drops_omits_the_capability(scratch: Path, stripped: str) -> None:
    strip, reason = STRIPPED[stripped]
    wrapper = scratch / f"runc-without-{stripped.replace(' ', '-')}"
    runc = shutil.which("runc")
    assert runc is not None
    wrapper.write_text(WRAPPER.format(python=os.path.realpath(sys.executable), strip=strip, runc=runc))
    os.chmod(wrapper, 0o755)
    root = scratch / f"root-{wrapper.name}"
    provider = run(OciExactProcessProvider.open(root, images=DictImageSource(), runc=str(wrapper)))
    assert provider.exact_process is None
    assert any(found.startswith(reason) for found in provider.reasons), provider.reasons
    assert run(provider.capabilities()).exact_process is None
    assert runc_ids(root) == []
    assert not [line for line in Path("/proc/mounts").read_text().splitlines() if str(root) in line]


@requires_runc
def test_the_real_runtime_enforces_every_property(scratch: Path) -> None:
    provider = run(OciExactProcessProvider.open(scratch / "real", images=DictImageSource()))
    assert provider.reasons == ()
    assert provider.support.id_base == 100_000
    assert run(provider.capabilities()).exact_process is not None


@pytest.mark.skipif(shutil.which("as") is None or shutil.which("objcopy") is None, reason="needs binutils")
@pytest.mark.parametrize("name", ["INIT_CODE", "PROBE_CODE"])
def test_the_static_programs_are_their_documented_source(tmp_path: Path, name: str) -> None:
    from agent_interface.evaluator.container import static_programs

    source = Path(static_programs.__file__).read_text()
    block = source.split(f"{name}: Final")[1].split('"""')[1]
    lines = []
    for line in block.split("::", 1)[1].splitlines():
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        label, _, rest = code.rpartition(":") if code.split()[0].endswith(":") else ("", "", code)
        if label:
            lines.append(f"{label.strip()}:")
        lines.extend(part.strip() for part in rest.split(";") if part.strip())
    assembly = tmp_path / "program.s"
    assembly.write_text(".intel_syntax noprefix\n.globl _start\n" + "\n".join(lines) + "\n")
    subprocess.run(["as", "-o", str(tmp_path / "program.o"), str(assembly)], check=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(tmp_path / "program.o"), str(tmp_path / "program.bin")], check=True)
    expected = {"INIT_CODE": INIT_CODE, "PROBE_CODE": PROBE_CODE}[name]
    assert (tmp_path / "program.bin").read_bytes() == expected
