"""The example experiment in OCI containers, from nothing to a report, with the CLI only.

Run as root on Debian with ``runc``, ``umoci``, ``skopeo``, ``buildah`` and ``mmdebstrap``
installed: ``python examples/experiment/run_in_containers.py --out DIR [--reps N]``. It

1. builds the Python task image (``examples/images/python/Containerfile``: python3, git,
   pytest) with ``agent-interface image build`` into the store ``DIR/images`` (the Debian base
   and the build are cached in ``~/.cache/agent-interface/image-builds``: a second run builds
   nothing);
2. writes the example experiment (``make_experiment.py``) whose task selects that image, so
   both agents run in it and the task's own tests (``python3 -I -m pytest``) grade in it;
3. runs it with ``agent-interface experiment run --executor container`` into ``DIR/run``;
4. writes the measured comparison and its page with ``agent-interface experiment report``,
   and prints where to open it.

The agents ask today's local model (the echo model behind the run's model endpoint). Exit
status: 0 when every step succeeded; otherwise the failing step's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_experiment import make

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "examples" / "images" / "python" / "Containerfile"
IMAGE_NAME = "task/python"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def cli() -> list[str]:
    """The ``agent-interface`` command next to this interpreter (the project's venv), else on PATH."""
    beside = Path(sys.executable).with_name("agent-interface")
    return [str(beside)] if beside.exists() else ["agent-interface"]


def step(title: str, argv: list[str], *, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """Run one CLI step with ``--json``; its JSON summary (exit on an unexpected status)."""
    print(f"== {title}\n   {' '.join(argv)}", flush=True)
    started = time.monotonic()
    done = subprocess.run([*argv, "--json"], capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    try:
        summary: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        summary = {"output": done.stdout[-2000:], "stderr": done.stderr[-2000:]}
    if done.returncode not in ok:
        print(json.dumps(summary, indent=2)[:4000], file=sys.stderr)
        print(f"   failed with exit status {done.returncode} after {seconds:.1f}s", file=sys.stderr)
        sys.exit(done.returncode)
    print(f"   done in {seconds:.1f}s", flush=True)
    return summary


def build_image(images: Path, cache: Path | None) -> dict[str, Any]:
    """``image build`` of the Python task image into ``images`` (cached)."""
    argv = [*cli(), "image", "build", str(CONTAINERFILE), "--images", str(images), "--name", IMAGE_NAME]
    if cache is not None:
        argv += ["--cache", str(cache)]
    if HOST_CA.is_file():  # for a machine whose HTTPS is inspected; harmless elsewhere
        argv += ["--ca-certificates", str(HOST_CA)]
    return step("build the Python task image (cached)", argv)


def task_container(images: Path, built: dict[str, Any]) -> dict[str, Any]:
    """The task's ``evaluatorTaskContainer`` for the image just built."""
    index = json.loads((images / "index.json").read_text())
    entry = next(e for e in index["manifests"] if e["digest"] == built["manifestDigest"])
    blobs = images / "blobs" / "sha256"
    manifest = json.loads((blobs / entry["digest"].removeprefix("sha256:")).read_bytes())
    config = json.loads((blobs / manifest["config"]["digest"].removeprefix("sha256:")).read_bytes())
    platform = {"os": config["os"], "architecture": config["architecture"]}
    if config.get("variant"):
        platform["variant"] = config["variant"]
    return {"source": "evaluator-task-container", "image": IMAGE_NAME, "indexDigest": built["manifestDigest"],
            "manifestDigest": built["manifestDigest"], "platform": platform}


def main() -> int:
    """Build, write, run, report (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where everything is written")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the task (default 3)")
    parser.add_argument("--workers", type=int, default=1, help="cells at a time (default 1)")
    parser.add_argument("--images", type=Path, help="the image store (default OUT/images)")
    parser.add_argument("--cache", type=Path, help="the image build cache (default ~/.cache/agent-interface/...)")
    parser.add_argument("--fresh", action="store_true", help="remove OUT/run first (else a run resumes)")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o711)  # the containers' user maps to another host id: it must traverse to the store
    images = (args.images or out / "images").resolve()
    built = build_image(images, args.cache)
    how = "cached" if built["cached"] else f"built in {built['buildSeconds']:.0f}s"
    print(f"   {built['reference']}  archive {built['archiveBytes'] / 1e6:.0f} MB, {how}")
    grader = {"commands": [{"name": "tests", "executable": "/usr/bin/python3",
                            "args": ["-I", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"],
                            "timeoutMs": 60_000}]}
    paths = make(out / "experiment", args.reps, grader=grader, task_container=task_container(images, built))
    print(f"== wrote the experiment: {paths['experiment']}")
    if args.fresh:
        shutil.rmtree(out / "run", ignore_errors=True)
    ran = step("run every cell in containers", [
        *cli(), "experiment", "run", str(paths["experiment"]), "--out", str(out / "run"),
        "--repository", str(paths["repository"]), "--artifacts", str(paths["artifacts"]),
        "--images", str(images), "--executor", "container", "--workers", str(args.workers)], ok=(0, 3))
    print(f"   cells: {ran['cells']}")
    for failure in ran.get("failures", []):
        print(f"   failed {failure['key']}: {failure['message']} [{failure['code']}]", file=sys.stderr)
    report = step("write the report", [*cli(), "experiment", "report", str(out / "run")], ok=(0, 1))
    page = out / "run" / "report.html"
    print(f"== open {page}" + ("" if report.get("verdict") != "refused" else " (the comparison is incomplete)"))
    return 0 if not ran.get("failures") else 3


if __name__ == "__main__":
    sys.exit(main())
