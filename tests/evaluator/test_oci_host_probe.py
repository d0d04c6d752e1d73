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


@requires_runc
def test_a_probe_that_saw_everything_is_reused_and_one_that_did_not_is_not(
        scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_interface.evaluator.container import host_probe

    monkeypatch.setattr(host_probe, "_OBSERVED", {})
    probes: list[object] = []
    real = host_probe._probe_container

    async def counted(*args: object) -> tuple[bool, bool, list[str]]:
        probes.append(args[-1])
        return await real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(host_probe, "_probe_container", counted)
    first = run(OciExactProcessProvider.open(scratch / "reuse-1", images=DictImageSource()))
    assert first.exact_process is not None and len(probes) == 2  # the host, then strict egress
    second = run(OciExactProcessProvider.open(scratch / "reuse-2", images=DictImageSource()))
    assert second.exact_process is not None and second.strict_egress_reasons == ()
    assert len(probes) == 2  # reused: no probe container ran
    monkeypatch.setattr(host_probe, "PROBE_REUSE_SECONDS", -1.0)  # expired
    run(OciExactProcessProvider.open(scratch / "reuse-3", images=DictImageSource()))
    assert len(probes) == 4

    async def failing(*args: object) -> tuple[bool, bool, list[str]]:
        probes.append(args[-1])
        return True, True, ["stubbed failure"]

    monkeypatch.setattr(host_probe, "PROBE_REUSE_SECONDS", 300.0)
    monkeypatch.setattr(host_probe, "_OBSERVED", {})
    monkeypatch.setattr(host_probe, "_probe_container", failing)
    for name in ("fail-1", "fail-2"):
        provider = run(OciExactProcessProvider.open(scratch / name, images=DictImageSource()))
        assert provider.exact_process is None and provider.reasons == ("stubbed failure",)
    assert len(probes) == 6  # each open probed again
