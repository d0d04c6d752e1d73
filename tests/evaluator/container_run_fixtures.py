"""Pieces of the containerized ``candidate run`` tests: a candidate program, its image, bundles.

The candidate is a small static C program (``AGENT_SOURCE``, compiled with ``gcc -static``)
put with Debian's static busybox into an OCI image index (this host's platform and
``linux/arm64``, the same files) imported into an :class:`OciImageStore`. ``agent MODE``
reads the instruction (``stdin``, ``argv``: the last argument, ``file``: the path in
``TANGLE_CANDIDATE_TASK_PATH``, which it must not be able to write or chmod), asks the
evaluator's model gateway once (one OpenAI chat completion, sent through the strict-egress
proxy ``HTTP_PROXY`` to ``OPENAI_BASE_URL`` with ``OPENAI_API_KEY``), and prints
``hello, candidate: <answer>``; ``sleep``, ``balloon`` and ``fail`` first ask, then
sleep, allocate 1 GiB or exit 3; ``fix`` first asks, then rewrites ``calc.py`` in its
working directory (the example experiment's bug fixed); ``escape PATH`` connects to the
Unix socket ``PATH``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import canonical_digest
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import (
    Entry,
    busybox_files,
    files_entries,
    tar_layer,
    write_index_image,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
ARTIFACTS = EXAMPLE / "artifacts"
IMAGE_NAME = "test/agent"

AGENT_SOURCE = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

static char instruction[8192];

static int connect_to(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) return -errno;
    return fd;
}

static int connect_tcp(const char *proxy) {
    /* proxy is http://127.0.0.1:PORT */
    const char *colon = strrchr(proxy, ':');
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(colon ? atoi(colon + 1) : 80)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) return -errno;
    return fd;
}

/* One chat completion through the strict-egress proxy (HTTP_PROXY) to the gateway
   (OPENAI_BASE_URL, OPENAI_API_KEY): the answer's content is printed after "hello, candidate: ". */
static void ask(const char *text) {
    const char *base = getenv("OPENAI_BASE_URL"), *key = getenv("OPENAI_API_KEY"), *proxy = getenv("HTTP_PROXY");
    if (!base || !key || !proxy) { puts("no gateway"); exit(5); }
    const char *host = base + 7, *path = strchr(host, '/');
    char body[20000]; size_t n = 0;
    n += sprintf(body + n, "{\"model\": \"demo-model\", \"messages\": [{\"role\": \"user\", \"content\": \"");
    for (const char *p = text; *p && n < sizeof(body) - 64; p++) {
        if (*p == '"' || *p == '\\') body[n++] = '\\';
        if (*p == '\n') { body[n++] = '\\'; body[n++] = 'n'; continue; }
        body[n++] = *p;
    }
    n += sprintf(body + n, "\"}]}");
    int fd = connect_tcp(proxy);
    if (fd < 0) { printf("connect %d\n", -fd); exit(6); }
    char request[24000];
    int head = snprintf(request, sizeof(request),
        "POST %s/chat/completions HTTP/1.1\r\nHost: %.*s\r\nContent-Type: application/json\r\n"
        "Authorization: Bearer %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
        base, (int)(path - host), host, key, n);
    memcpy(request + head, body, n);
    write(fd, request, head + n);
    char reply[20000]; size_t got = 0; ssize_t r;
    while (got < sizeof(reply) - 1 && (r = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0) got += r;
    reply[got] = 0;
    char *start = strstr(reply, "\"content\":\"");
    size_t skip = 11;
    if (!start) { start = strstr(reply, "\"content\": \""); skip = 12; }
    if (!start) { printf("bad reply %.300s\n", reply); exit(7); }
    start += skip;
    char *end = strchr(start, '"');
    if (end) *end = 0;
    printf("hello, candidate: %s\n", start);
    fflush(stdout);
}

static void read_all(int fd) {
    size_t got = 0; ssize_t r;
    while (got < sizeof(instruction) - 1 && (r = read(fd, instruction + got, sizeof(instruction) - 1 - got)) > 0) got += r;
    instruction[got] = 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "stdin";
    if (!strcmp(mode, "escape")) {
        int fd = connect_to(argv[2]);
        printf("escape %d\n", fd < 0 ? -fd : 0);
        return 0;
    }
    if (!strcmp(mode, "argv")) {
        strncpy(instruction, argv[argc - 1], sizeof(instruction) - 1);
    } else if (!strcmp(mode, "file")) {
        const char *path = getenv("TANGLE_CANDIDATE_TASK_PATH");
        if (!path) { puts("no task path"); return 8; }
        if (open(path, O_WRONLY | O_APPEND) >= 0) { puts("task file writable"); return 9; }
        if (chmod(path, 0666) == 0) { puts("task file chmod"); return 9; }
        if (unlink(path) == 0) { puts("task file removed"); return 9; }
        int fd = open(path, O_RDONLY);
        if (fd < 0) { printf("open %d\n", errno); return 8; }
        read_all(fd);
    } else {
        read_all(0);
    }
    if (!strcmp(mode, "argv") || !strcmp(mode, "file")) {
        char here[256];
        if (!getcwd(here, sizeof(here)) || strcmp(here, "/tangle/task")) { puts("wrong cwd"); return 10; }
        if (access("/tangle/task/TASK.md", R_OK) != 0) { puts("no task workspace"); return 10; }
    }
    ask(instruction);
    if (!strcmp(mode, "sleep")) { for (;;) pause(); }
    if (!strcmp(mode, "fail")) return 3;
    if (!strcmp(mode, "fix")) {
        const char *text = "def add(a, b):\n    return a + b\n";
        int fd = open("calc.py", O_WRONLY | O_TRUNC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) { printf("fix %d\n", errno); return 11; }
        close(fd);
    }
    if (!strcmp(mode, "balloon")) {
        for (long i = 0; i < 1024; i++) { char *p = malloc(1 << 20); if (!p) return 4; memset(p, 1, 1 << 20); }
        puts("ballooned");
    }
    return 0;
}
"""


@dataclass(frozen=True)
class AgentImage:
    """The candidate image in a store: its name, index digest and host manifest digest."""

    store: OciImageStore
    layout: Path
    index_digest: str
    manifest_digest: str
    other_manifest_digest: str


def compile_agent(directory: Path) -> bytes:
    source = directory / "agent.c"
    source.write_text(AGENT_SOURCE)
    subprocess.run(["gcc", "-static", "-O1", "-o", str(directory / "agent"), str(source)], check=True)
    return (directory / "agent").read_bytes()


def agent_image(directory: Path) -> AgentImage:
    """Build the image index (host platform and linux/arm64) and import it into a new store."""
    files = {**busybox_files(), "bin/agent": compile_agent(directory)}
    layer = tar_layer([*files_entries(files), Entry("tmp/", kind="dir", mode=0o1777)])
    host = host_platform()
    other = ("linux", "arm64" if host.architecture != "arm64" else "amd64")
    built = write_index_image(directory / "layout", {(host.os, host.architecture): [layer], other: [layer]},
                              tag="agent")
    store = OciImageStore(directory / "store")
    store.import_layout(directory / "layout", name=IMAGE_NAME, tag="agent")
    mine = built[(host.os, host.architecture)]
    assert mine.index_digest is not None
    return AgentImage(store, directory / "layout", mine.index_digest, mine.manifest_digest,
                      built[other].manifest_digest)


def bundle(mode: str, *, delivery: str = "stdin-utf8", environment: dict[str, Any] | None = None) -> bytes:
    """A candidate bundle launching ``/bin/agent MODE`` (disabled code, the example profile)."""
    delivery_wire: dict[str, Any] = {"kind": delivery}
    if delivery == "utf8-file":
        delivery_wire = {"kind": "utf8-file", "env": "TANGLE_CANDIDATE_TASK_PATH", "path": "/tangle/input/task.txt"}
    material = {
        "kind": "agent-candidate-bundle", "digestAlgorithm": "rfc8785-sha256",
        "profile": {"name": "t", "prompt": {"systemPrompt": "Be brief."}},
        "code": {"kind": "disabled"},
        "execution": {
            "harness": "codex", "harnessVersion": "0.1.0",
            "launch": {"kind": "container-command", "executable": "/bin/agent",
                       "args": [{"kind": "public", "value": mode}]},
            "instructionDelivery": delivery_wire,
            "cwd": {"workspace": "task", "path": "."},
            "env": {"PATH": {"kind": "public", "value": "/bin"}},
            "environment": environment or {"kind": "evaluator-task-container"},
            "isolation": {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"},
        },
        "memory": {"mode": "disabled"},
    }
    return json.dumps({**material, "digest": canonical_digest(material)}).encode()


def pinned(index_digest: str, image: str = IMAGE_NAME) -> dict[str, Any]:
    return {"kind": "pinned-container", "container": {"image": image, "indexDigest": index_digest}}


def task(container: dict[str, Any] | None = None, **limits: Any) -> AgentCandidateBenchmarkTask:
    """The example task (its workspace holds ``TASK.md``), with ``container`` selected."""
    wire = json.loads((EXAMPLE / "task.json").read_text())
    wire.pop("digest")
    wire["limits"].update(limits)
    if container is not None:
        wire["evaluatorTaskContainer"] = container
    return AgentCandidateBenchmarkTask.seal(wire)


def task_container(image: AgentImage, **changes: Any) -> dict[str, Any]:
    host = host_platform()
    return {"source": "evaluator-task-container", "image": IMAGE_NAME, "indexDigest": image.index_digest,
            "manifestDigest": image.manifest_digest,
            "platform": {"os": host.os, "architecture": host.architecture}, **changes}
