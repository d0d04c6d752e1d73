"""A tiny local "agent" for the example provider: it answers a prompt by echoing it.

The provider runs it once per turn as ``python echo_agent.py [--delay-ms N] PROMPT`` with
argv only (no shell), a replacement environment and the environment's workspace as its
working directory. It writes one JSON object per line on stdout:

* ``{"kind": "text", "text": "..."}``: a piece of the answer, in order;
* ``{"kind": "usage", "input": N, "output": M}``: the turn's token total so far;

and exits 0. ``--delay-ms`` waits between pieces (to show cancellation). If the prompt
is ``fail``, it writes nothing and exits 3.
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    delay = 0.0
    if len(argv) >= 2 and argv[0] == "--delay-ms":
        delay = int(argv[1]) / 1000
        argv = argv[2:]
    prompt = " ".join(argv)
    if prompt == "fail":
        return 3
    words = f"echo: {prompt}".split(" ")
    for index, word in enumerate(words):
        piece = word if index == 0 else f" {word}"
        print(json.dumps({"kind": "text", "text": piece}), flush=True)
        if delay:
            time.sleep(delay)
    print(json.dumps({"kind": "usage", "input": len(prompt.split()), "output": len(words)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
