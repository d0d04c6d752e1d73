"""CIDs, the CID store, Git tree ids, and the safe tar unpacker on hostile archives."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from agent_interface.candidate.cid import cid_for_bytes, sha256_of_cid
from agent_interface.evaluator.git.tree_hash import git_tree_id_of_directory
from agent_interface.evaluator.images.safe_tar import ArchiveLimits, ArchiveRefused, unpack_tar
from agent_interface.evaluator.run.snapshot import SnapshotRefused, unpack_snapshot
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore
from agent_interface.evaluator.verify.resolver import ArtifactRequest, ResolutionRefused

# Recorded with the npm `multiformats` library (CID.create(1, raw.code, sha256.digest(bytes))).
CID_VECTORS = {
    b"": "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
    b"hello world": "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e",
    "\x00\xff".encode(): "bafkreih2gfvqe27kdnnhjapwrwzxx7welwlfz3po3plmlnvd6ffeodxwg4",
}


@pytest.mark.parametrize(("data", "cid"), CID_VECTORS.items())
def test_cid_vectors(data: bytes, cid: str) -> None:
    assert cid_for_bytes(data) == cid
    assert sha256_of_cid(cid) is not None


@pytest.mark.parametrize("text", ["Qm" + "1" * 44, "b" + "a" * 58, "bafkreihdwdcefgh4", "B" + "A" * 58])
def test_other_cids_are_not_raw_sha256(text: str) -> None:
    assert sha256_of_cid(text) is None


def test_store_names_bytes_by_cid_and_serves_them(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    ref = store.put(b"hello world").to_wire()
    assert ref["locator"] == {"kind": "ipfs", "cid": CID_VECTORS[b"hello world"]}
    assert store.put(b"hello world").to_wire() == ref
    request = ArtifactRequest("/x", "ipfs", {"cid": ref["locator"]["cid"]}, ref["sha256"], ref["byteLength"])
    assert store.fetch(request) == b"hello world"
    (tmp_path / ref["locator"]["cid"]).write_bytes(b"tampered!!!")
    with pytest.raises(ResolutionRefused) as refused:
        store.fetch(request)
    assert refused.value.code == "artifact_corrupt"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_tree_id_equals_git(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x").write_bytes(b"hi\n")
    (tmp_path / "run").write_bytes(b"exe")
    (tmp_path / "run").chmod(0o755)
    (tmp_path / "a-b").write_bytes(b"z")
    (tmp_path / "empty").mkdir()
    os.symlink("a/b/x", tmp_path / "link")
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True, env=env)
    expected = subprocess.run(["git", "write-tree"], cwd=tmp_path, check=True, env=env,
                              capture_output=True).stdout.decode().strip()
    subprocess.run(["rm", "-rf", str(tmp_path / ".git")], check=True)
    assert git_tree_id_of_directory(tmp_path) == expected


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


HOSTILE = {
    "tar_slip": (_tar((_info("../escape"), b"x")), "tar_path_unsafe"),
    "absolute": (_tar((_info("/etc/evil"), b"x")), "tar_path_unsafe"),
    "dot_git": (_tar((_info(".git/config"), b"x")), "tar_path_unsafe"),
    "symlink_escape": (_tar((_info("link", tarfile.SYMTYPE, "../../outside"), None)), "tar_symlink"),
    "hardlink_outside": (_tar((_info("hard", tarfile.LNKTYPE, "/etc/passwd"), None)), "tar_hardlink"),
    "device": (_tar((_info("dev", tarfile.CHRTYPE), None)), "tar_special_entry"),
    "fifo": (_tar((_info("fifo", tarfile.FIFOTYPE), None)), "tar_special_entry"),
    "duplicate": (_tar((_info("a"), b"1"), (_info("a"), b"2")), "tar_duplicate_path"),
    "file_then_dir": (_tar((_info("a"), b"1"), (_info("a/b"), b"2")), "tar_duplicate_path"),
    "not_tar": (b"not a tar archive at all" * 30, "tar_unreadable"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_archives_are_refused(name: str, tmp_path: Path) -> None:
    archive, code = HOSTILE[name]
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(ArchiveRefused) as refused:
        unpack_tar(archive, into, allow_symlinks=True)
    assert refused.value.code == code
    assert not (tmp_path / "escape").exists()


def test_size_and_count_bounds(tmp_path: Path) -> None:
    big = _tar((_info("big"), b"x" * 2048))
    with pytest.raises(ArchiveRefused) as refused:
        unpack_tar(big, tmp_path, limits=ArchiveLimits(max_file_bytes=1024))
    assert refused.value.code == "tar_too_large"
    many = _tar(*((_info(f"f{i}"), b"") for i in range(5)))
    with pytest.raises(ArchiveRefused):
        unpack_tar(many, tmp_path / "x" if (tmp_path / "x").mkdir() is None else tmp_path,
                   limits=ArchiveLimits(max_entries=3))


def test_a_link_inside_is_written_when_allowed(tmp_path: Path) -> None:
    entries = unpack_tar(_tar((_info("a/x"), b"1"), (_info("a/l", tarfile.SYMTYPE, "x"), None)),
                         tmp_path, allow_symlinks=True)
    assert [entry.kind for entry in entries] == ["file", "symlink"]
    assert os.readlink(tmp_path / "a" / "l") == "x"


def test_snapshot_must_be_its_manifest(tmp_path: Path) -> None:
    import hashlib

    data = b"print(1)\n"
    material = {"kind": "agent-candidate-workspace-manifest", "files": [
        {"path": "a.py", "mode": 0o644, "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
         "byteLength": len(data)}]}
    (tmp_path / "ok").mkdir()
    assert len(unpack_snapshot(material, _tar((_info("a.py"), data)), tmp_path / "ok")) == 1
    cases = {
        "snapshot_mode_mismatch": _tar((_info("a.py", mode=0o755), data)),
        "snapshot_digest_mismatch": _tar((_info("a.py"), b"print(2)\n")),
        "snapshot_size_mismatch": _tar((_info("a.py"), b"print(22)\n")),
        "snapshot_extra_file": _tar((_info("a.py"), data), (_info("b.py"), b"")),
        "snapshot_file_missing": _tar((_info("c.py"), data)),
    }
    for code, archive in cases.items():
        into = tmp_path / code
        into.mkdir()
        with pytest.raises(SnapshotRefused) as refused:
            unpack_snapshot(material, archive, into, pointer="/execution/workspace")
        assert refused.value.code == code
        assert refused.value.issues[0].path.startswith("/execution/workspace")
