"""Compare two Codex profiles on a repository task graded by its own tests, with the CLI only.

Run as root on Debian with ``runc``, ``umoci``, ``skopeo``, ``buildah`` and ``mmdebstrap``
installed: ``python examples/experiment/compare_harness_profiles.py --out DIR [--reps N]``. It

1. builds the ``python/codex`` image (the Python task image with the Codex CLI on top:
   ``image build examples/images/codex/Containerfile --on examples/images/python/Containerfile``;
   cached: a second run builds nothing);
2. writes the task's repository ``calc`` (``calc.py`` whose ``add`` subtracts, and its test)
   and, with ``task new --repository``, a workspace task graded in that image by the
   repository's own tests (``python3 -I -m pytest``), only ``calc.py`` a solution may change;
   ``suite new`` repeats it ``--reps`` times;
3. makes two bundles run by the real Codex CLI (``candidate new --no-code --harness codex``)
   that differ only in their profile: the baseline has no project instruction, the
   candidate's ``AGENTS.md`` says to run the tests before finishing; ``experiment new``
   seals the experiment;
4. runs it with ``experiment run --executor container``: Codex runs in the task's container
   and calls the evaluator's model gateway, behind which is ``--model-upstream``;
5. writes the measured comparison and its page with ``experiment report``, and prints where
   to open it.

The default upstream is a scripted model this script writes (``DIR/model-script.json``):
the same replies to every run (a shell call that fixes ``calc.py``, one that runs the
tests, a final answer), because a script cannot read the request. With it the comparison
demonstrates the machinery, not a difference between the profiles: both arms do the same
thing, and what differs is what the gateway received (the candidate's ``AGENTS.md`` text is
in its requests: more input tokens per call). ``--model-upstream openai:URL --model-key-env
VAR`` puts a real model behind the gateway and makes it a measurement. Exit status: 0 when
every step succeeded; otherwise the failing step's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_experiment import CALC, INSTRUCTION, commit, git
from run_in_containers import HOST_CA, cli, step

ROOT = Path(__file__).resolve().parents[2]
CODEX_CONTAINERFILE = ROOT / "examples" / "images" / "codex" / "Containerfile"
PYTHON_CONTAINERFILE = ROOT / "examples" / "images" / "python" / "Containerfile"
IMAGE_NAME = "python/codex"
TESTS = "/usr/bin/python3 -I -B -m pytest -q -p no:cacheprovider test_calc.py"
PROFILES = {
    "baseline": [],
    "candidate": ["Run the tests (python3 -B -m pytest -q -p no:cacheprovider test_calc.py) before you finish."],
}
SCRIPT = [
    {"toolCalls": [{"name": "exec_command", "arguments": {"cmd": "sed -i 's/a - b/a + b/' calc.py"}}]},
    {"toolCalls": [{"name": "exec_command",
                    "arguments": {"cmd": "python3 -B -m pytest -q -p no:cacheprovider test_calc.py"}}]},
    {"text": "add() in calc.py now adds; the tests pass."},
]
"""The scripted model's replies, the same for every run: Codex's shell tool is ``exec_command``."""


def build_image(images: Path, cache: Path | None) -> str:
    """``image build`` of ``python/codex`` into ``images`` (cached); its ``NAME@sha256:DIGEST``."""
    argv = [*cli(), "image", "build", str(CODEX_CONTAINERFILE), "--on", str(PYTHON_CONTAINERFILE),
            "--images", str(images), "--name", IMAGE_NAME]
    if cache is not None:
        argv += ["--cache", str(cache)]
    if HOST_CA.is_file():  # for a machine whose HTTPS is inspected; harmless elsewhere
        argv += ["--ca-certificates", str(HOST_CA)]
    built = step("build the python/codex image (cached)", argv)
    how = "cached" if built["cached"] else f"built in {built['buildSeconds']:.0f}s"
    print(f"   {built['reference']}  archive {built['archiveBytes'] / 1e6:.0f} MB, {how}")
    return f"{IMAGE_NAME}@{built['manifestDigest']}"


def write_experiment(out: Path, image: str, images: Path, reps: int) -> dict[str, Path]:
    """Steps 2 and 3: the task's repository, the task, the suite, both bundles, the experiment."""
    out.mkdir(parents=True, exist_ok=True)
    calc = out / "calc"
    shutil.rmtree(calc, ignore_errors=True)
    calc.mkdir()
    git(calc, "init", "-q")
    commit(calc, CALC, "calc with a bug")
    print(f"== wrote the task's repository: {calc}")
    artifacts = out / "artifacts"
    step("write the task: the repository's own tests grade it in the image", [
        *cli(), "task", "new", "--benchmark", "calc-bench", "--scenario", "fix-add", "--instruction", INSTRUCTION,
        "--repository", str(calc), "--identity", "example/calc", "--test", TESTS, "--solution-path", "calc.py",
        "--image", image, "--images", str(images), "--timeout-ms", "300000", "--max-model-calls", "8",
        # a Codex request carries its tools and instructions: the gateway reserves ~4x its tokens
        "--max-input-tokens", "2000000", "--max-output-tokens", "100000", "--max-total-tokens", "2100000",
        "--artifacts", str(artifacts), "--out", str(out / "task.json")])
    step(f"write the suite: the task {reps} times", [
        *cli(), "suite", "new", "--task", str(out / "task.json"), "--reps", str(reps), "--out", str(out / "suite.json")])
    for arm, instructions in PROFILES.items():
        said = "; ".join(instructions) or "no project instruction"
        step(f"write the {arm} bundle: Codex, AGENTS.md: {said}", [
            *cli(), "candidate", "new", "--no-code", "--harness", "codex", "--name", "calc-fixer",
            *[word for text in instructions for word in ("--instructions", text)], "--out", str(out / f"{arm}.json")])
    step("write the experiment", [
        *cli(), "experiment", "new", "--baseline", str(out / "baseline.json"), "--candidate",
        str(out / "candidate.json"), "--suite", str(out / "suite.json"), "--task", str(out / "task.json"),
        "--out", str(out / "experiment.json")])
    script = out / "model-script.json"
    script.write_text(json.dumps(SCRIPT, indent=2) + "\n", encoding="utf-8")
    return {"experiment": out / "experiment.json", "artifacts": artifacts, "script": script}


def main() -> int:
    """Build, write, run, report (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where everything is written")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the task (default 3)")
    parser.add_argument("--workers", type=int, default=1, help="cells at a time (default 1)")
    parser.add_argument("--images", type=Path, help="the image store (default OUT/images)")
    parser.add_argument("--cache", type=Path, help="the image build cache (default ~/.cache/agent-interface/...)")
    parser.add_argument("--fresh", action="store_true", help="remove OUT/run first (else a run resumes)")
    parser.add_argument("--model-upstream",
                        help="the model behind the gateway (default scripted:OUT/model-script.json, offline)")
    parser.add_argument("--model-key-env", help="the variable holding the upstream's key")
    args = parser.parse_args()
    started = time.monotonic()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o711)  # the containers' user maps to another host id: it must traverse to the store
    images = (args.images or out / "images").resolve()
    image = build_image(images, args.cache)
    paths = write_experiment(out / "experiment", image, images, args.reps)
    upstream = args.model_upstream or f"scripted:{paths['script']}"
    if args.fresh:
        shutil.rmtree(out / "run", ignore_errors=True)
    ran = step("run every cell in containers: Codex calls the model gateway", [
        *cli(), "experiment", "run", str(paths["experiment"]), "--out", str(out / "run"),
        "--artifacts", str(paths["artifacts"]), "--images", str(images), "--executor", "container",
        "--workers", str(args.workers), "--model-upstream", upstream,
        *(["--model-key-env", args.model_key_env] if args.model_key_env else [])], ok=(0, 3))
    print(f"   cells: {ran['cells']}")
    for failure in ran.get("failures", []):
        print(f"   failed {failure['key']}: {failure['message']} [{failure['code']}]", file=sys.stderr)
    label = "Codex; the candidate's AGENTS.md says to run the tests before finishing, the baseline has none."
    if upstream.startswith("scripted:"):
        label += (" Model: the offline scripted one, the same replies to both arms: this shows the machinery,"
                  " not a measurement (--model-upstream openai:URL --model-key-env VAR makes it one).")
    report = step("write the report", [*cli(), "experiment", "report", str(out / "run"), "--label", label],
                  ok=(0, 1))
    if upstream.startswith("scripted:"):
        print("   the scripted model answers both arms alike: this shows the machinery, not a measurement "
              "(--model-upstream openai:URL --model-key-env VAR for one)")
    page = out / "run" / "report.html"
    print(f"== open {page}" + ("" if report.get("verdict") != "refused" else " (the comparison is incomplete)"))
    print(f"   {time.monotonic() - started:.0f}s in all")
    return 0 if not ran.get("failures") else 3


if __name__ == "__main__":
    sys.exit(main())
