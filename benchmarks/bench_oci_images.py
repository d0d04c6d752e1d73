"""First and cached import/unpack times of the busybox test image in the OCI image store.

Run: ``.venv/bin/python benchmarks/bench_oci_images.py [runs]`` (default 10; needs
Debian's ``busybox-static``, and ``skopeo`` for the archive rows). Each run uses a fresh
store. Prints the median and range, in milliseconds, of:

* import from an OCI layout (every blob copied through its digest check), first and again
  (the blobs already there: read and checked, not copied);
* import of an ``oci-archive`` and a ``docker-archive`` (``skopeo`` into a scratch layout,
  then the same check);
* ``image_root``: the first unpack (every layer streamed, hashed and applied), the cached
  lookup (manifest and config re-read and checked, one ``stat``), and the first unpack
  with a user-namespace id mapping (every entry chowned; needs root).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.oci_fixtures import build_image, busybox_files

from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_import import import_docker_archive, import_oci_archive
from agent_interface.evaluator.images.oci_store import OciImageStore


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def report(label: str, samples: list[float]) -> None:
    if samples:
        print(f"{label:<44} median {statistics.median(samples):8.2f} ms"
              f"   range {min(samples):8.2f} .. {max(samples):8.2f} ms   (n={len(samples)})")


def one_run(work: Path, run: int, layout: Path, manifest: str, skopeo: bool, rows: dict[str, list[float]]) -> None:
    def add(label: str, ms: float) -> None:
        rows.setdefault(label, []).append(ms)

    store = OciImageStore(work / f"store-{run}")
    add("import layout (first)", timed(lambda: store.import_layout(layout, name="busybox")))
    add("import layout (blobs present)", timed(lambda: store.import_layout(layout, name="busybox")))
    add("image_root (first unpack)", timed(lambda: store.image_root(manifest)))
    add("image_root (cached)", timed(lambda: store.image_root(manifest)))
    if os.geteuid() == 0:
        mapping = IdMapping(100000, 100000)
        add("image_root (first unpack, id mapping)", timed(lambda: store.image_root(manifest, mapping)))
    if skopeo:
        fresh = OciImageStore(work / f"archive-store-{run}")
        add("import oci-archive (skopeo + check)",
            timed(lambda: import_oci_archive(fresh, work / "o.tar", name="busybox")))
        add("import docker-archive (skopeo + check)",
            timed(lambda: import_docker_archive(fresh, work / "d.tar", name="busybox")))
    shutil.rmtree(work / f"store-{run}", ignore_errors=True)
    shutil.rmtree(work / f"archive-store-{run}", ignore_errors=True)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    work = Path(tempfile.mkdtemp(prefix="bench-oci-"))
    try:
        image = build_image(work / "layout", busybox_files(), tag="busybox")
        size = sum(p.stat().st_size for p in (work / "layout" / "blobs" / "sha256").iterdir())
        print(f"busybox image: {size / 1e6:.2f} MB of blobs, manifest {image.manifest_digest[:19]}...")
        skopeo = shutil.which("skopeo") is not None
        if skopeo:
            source = f"oci:{image.layout}:busybox"
            subprocess.run(["skopeo", "copy", "-q", source, f"oci-archive:{work}/o.tar"], check=True)
            subprocess.run(["skopeo", "copy", "-q", source, f"docker-archive:{work}/d.tar"], check=True)
        rows: dict[str, list[float]] = {}
        for run in range(runs):
            one_run(work, run, image.layout, image.manifest_digest, skopeo, rows)
        for label, samples in rows.items():
            report(label, samples)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
