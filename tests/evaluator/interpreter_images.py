"""Images holding a real interpreter, and git-patch candidates launched through it.

``python`` holds Debian's ``/usr/bin/python3.11`` (``python3`` a link to it), the shared
libraries ``ldd`` lists and the standard-library files an ordinary start imports;
``node`` holds the host's ``/usr/bin/node`` and its libraries. Both also hold busybox and
``/tmp`` (1777). The candidates come from a Git repository whose head commit adds
``agent.py``, ``agent.js`` and ``run.py`` (executable, ``#!/usr/bin/python3``); each reads the
instruction on stdin, asks the evaluator's model gateway once (an OpenAI chat completion to
``$OPENAI_BASE_URL`` through the proxy ``$HTTP_PROXY``: ``urllib.request`` for Python, the
``http`` module for Node, whose ``fetch`` ignores proxy variables) and prints a greeting. They are built into
bundles by the public :class:`~agent_interface.evaluator.author.bundle_builder.CandidateBundleBuilder`.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.evaluator.author.bundle_builder import CandidateBundleBuilder
from agent_interface.evaluator.author.task_builder import BenchmarkTaskBuilder
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import (
    Entry,
    busybox_files,
    files_entries,
    tar_layer,
    write_index_image,
)

PYTHON = "/usr/bin/python3.11"
NODE = "/usr/bin/node"
_STARTUP = "import encodings.idna, json, sys, urllib.request; print('\\n'.join(sorted({m.__file__ for m in list(sys.modules.values()) " \
           "if getattr(m, '__file__', None)})))"
_ASK = b"""import json, os, sys, urllib.request
text = sys.stdin.read().strip()
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps({"model": "demo-model", "messages": [{"role": "user", "content": text}]}).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
with urllib.request.urlopen(request, timeout=60) as response:
    reply = {"output": json.load(response)["choices"][0]["message"]["content"]}
"""
PY_AGENT = _ASK + b"print('greeting from python', sys.version_info[0], text, '/', reply['output'])\n"
RUN_AGENT = b"#!/usr/bin/python3\n" + _ASK + b"print('greeting from a shebang', text, '/', reply['output'])\n"
JS_AGENT = b"""const http = require('http');
let text = '';
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => {
  // Node's http module through the proxy the evaluator names: the request line carries the
  // absolute URL, as HTTP proxies expect (fetch would ignore HTTP_PROXY and reach nothing).
  const proxy = new URL(process.env.HTTP_PROXY);
  const target = new URL(process.env.OPENAI_BASE_URL + '/chat/completions');
  const body = JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: text.trim() }] });
  const request = http.request({
    host: proxy.hostname, port: proxy.port, method: 'POST', path: target.href,
    headers: { Host: target.host, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
               Authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
  }, (response) => {
    let reply = '';
    response.on('data', (chunk) => { reply += chunk; });
    response.on('end', () => {
      const answer = JSON.parse(reply).choices[0].message.content;
      console.log('greeting from node', text.trim(), '/', answer);
    });
  });
  request.end(body);
});
"""


def _libraries(*programs: str) -> set[str]:
    found: set[str] = set()
    for program in programs:
        listed = subprocess.run(["ldd", program], capture_output=True, text=True, check=True, timeout=60).stdout
        for line in listed.splitlines():
            words = line.split()
            path = words[2] if "=>" in words and len(words) > 2 else words[0]
            if path.startswith("/"):
                found.add(path)
    return found


def python_files() -> dict[str, bytes | str]:
    """``python3.11``, its libraries and the files an ordinary start (``site`` included) imports."""
    modules = subprocess.run([PYTHON, "-c", _STARTUP], capture_output=True, text=True, check=True,
                             timeout=60, env={"PATH": "/usr/bin:/bin"}).stdout.split()
    modules = [module for module in modules if module.startswith("/usr/lib/python3")]
    binaries = [PYTHON, *(module for module in modules if module.endswith(".so"))]
    paths = {*binaries, *modules, *_libraries(*binaries)}
    files: dict[str, bytes | str] = {path.lstrip("/"): Path(os.path.realpath(path)).read_bytes() for path in paths}
    files["usr/bin/python3"] = "->python3.11"
    return files


def node_files() -> dict[str, bytes | str]:
    """``node`` and its libraries."""
    return {path.lstrip("/"): Path(os.path.realpath(path)).read_bytes() for path in {NODE, *_libraries(NODE)}}


@dataclass(frozen=True)
class InterpreterImage:
    """One image in its own store: what a bundle pins and the run names."""

    store: OciImageStore
    name: str
    index_digest: str
    manifest_digest: str


def interpreter_image(directory: Path, name: str, files: dict[str, bytes | str]) -> InterpreterImage:
    """``files`` (programs and libraries executable) plus busybox and ``/tmp``, imported as ``name``."""
    everything = {**busybox_files(), **files}
    entries = [dataclasses.replace(entry, mode=0o755)
               if entry.kind == "file" and (entry.name.startswith(("usr/bin/", "lib", "usr/lib/x86_64"))
                                            or ".so" in entry.name) else entry
               for entry in files_entries(everything)]
    layer = tar_layer([*entries, Entry("tmp/", kind="dir", mode=0o1777)])
    host = host_platform()
    built = write_index_image(directory / "layout", {(host.os, host.architecture): [layer]}, tag="t")
    store = OciImageStore(directory / "store")
    store.import_layout(directory / "layout", name=name, tag="t")
    mine = built[(host.os, host.architecture)]
    assert mine.index_digest is not None
    return InterpreterImage(store, name, mine.index_digest, mine.manifest_digest)


def _git(repository: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repository), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=repository,
                   env=env, check=True, capture_output=True, timeout=60)


def candidate_repository(directory: Path) -> Path:
    """A repository whose head commit adds the three agents to a README-only base."""
    directory.mkdir(parents=True)
    _git(directory, "init", "-q")
    (directory / "README.md").write_text("# agents\n")
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "base")
    (directory / "agent.py").write_bytes(PY_AGENT)
    (directory / "agent.js").write_bytes(JS_AGENT)
    (directory / "run.py").write_bytes(RUN_AGENT)
    os.chmod(directory / "run.py", 0o755)
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "agents")
    return directory


def git_patch_bundle(repository: Path, image: InterpreterImage, entrypoint: str,
                     interpreter: str | None) -> AgentCandidateBundle:
    """A git-patch candidate launching ``entrypoint`` (through ``interpreter``) in ``image``."""
    return (CandidateBundleBuilder(f"agent-{entrypoint.replace('.', '-')}")
            .code_from_git(repository, base="HEAD~1", head="HEAD", owner="local", repo="agents")
            .entrypoint(entrypoint, interpreter=interpreter)
            .container(image.name, image.index_digest)
            .build())


def greeting_task(directory: Path, expected: str) -> AgentCandidateBenchmarkTask:
    """A task whose output must contain ``expected``; its artifacts are written to ``directory``."""
    builder = (BenchmarkTaskBuilder("interpreters", "1", scenario="greet")
               .instruction("hello there")
               .output(max_bytes=4096)
               .output_checks(contains=[expected])
               .workspace({"TASK.md": b"greet\n"}))
    task = builder.build()
    builder.artifacts.write_to(directory)
    return task
