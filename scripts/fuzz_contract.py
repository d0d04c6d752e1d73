"""Bounded fuzzing of every registered wire schema with mutated golden and conformance documents.

Each case takes a document the reference accepts or refuses (``tests/golden/*`` and the
conformance file given on the command line), mutates it (type swaps, deep nesting, huge
strings and collections, lone surrogates, NUL, a BOM, ``1e400``, ``-0``, ``2**53 + 1``,
duplicate keys, trailing garbage, truncation), and runs it through ``.parse(bytes)``,
``.parse(str)``, ``.parse_value``, ``canonical_digest`` and the ``to_wire`` round trips. It
reports:

* **untyped exceptions**: anything but a ``ContractError`` out of a public entry point;
* **slow inputs**: a case over 1 s (and hangs, stopped by a watchdog);
* **memory**: the process's peak resident size, and the largest peak of Python
  allocations per input byte among inputs over 1 MB;
* **drift**: an accepted document whose wire form, reparsed as a value or as JSON text,
  gives another value or digest, and JSON text whose verdict differs from the verdict on
  the value ``JSON.parse`` would give.

Run from the repository root (the conformance file is read here, never by the tests)::

    python scripts/fuzz_contract.py --seconds 300 --seed 1 \\
        --conformance ../shared/conformance/reference-1.6.0-documents.jsonl.gz

Every finding names its seed and case number; ``--replay SEED:CASE`` runs that one case
again and prints it.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import math
import random
import resource
import signal
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schemas

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
DEFAULT_CONFORMANCE = "../shared/conformance/reference-1.6.0-documents.jsonl.gz"
SLOW = 1.0
HANG = 30.0
BIG_INPUT = 1 << 20
MAX_INPUT = 24 << 20


# -- the corpus -------------------------------------------------------------------------------


def load_corpus(conformance: str | None) -> list[tuple[str, Any]]:
    schemas = wire_schemas()
    files = sorted(GOLDEN.glob("*.jsonl")) + sorted(GOLDEN.glob("*.jsonl.gz"))
    if conformance and Path(conformance).exists():
        files.append(Path(conformance))
    corpus: list[tuple[str, Any]] = []
    for path in files:
        opener: Any = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if not isinstance(case, dict):
                    continue
                name = case.get("schema")
                document = case.get("value", case.get("doc"))
                if isinstance(name, str) and name in schemas and ("value" in case or "doc" in case):
                    corpus.append((name, document))
    return corpus


# -- JSON text with what json.dumps cannot write --------------------------------------------


class Raw(str):
    """Written into the JSON text as it is (``1e400``, a 401-digit integer)."""


class Pairs(list):  # type: ignore[type-arg]
    """An object written from its pairs, so a key may repeat."""


class Deep:
    """``inner`` wrapped in ``levels`` arrays and objects, written without recursion."""

    def __init__(self, levels: int, inner: Any) -> None:
        self.levels, self.inner = levels, inner

    def text(self) -> str:
        opening = ["[" if index % 2 else '{"k":' for index in reversed(range(self.levels))]
        closing = ["]" if index % 2 else "}" for index in range(self.levels)]
        return "".join(opening) + emit(self.inner) + "".join(closing)

    def value(self) -> Any:
        value = plain(self.inner)
        for index in range(self.levels):
            value = [value] if index % 2 else {"k": value}
        return value


def emit(value: Any) -> str:
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Pairs):
        return "{" + ",".join(emit_key(key) + ":" + emit(item) for key, item in value) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(emit_key(key) + ":" + emit(item) for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(emit(item) for item in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return "1e400" if value > 0 else "-1e400"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**4000:
        return "1" + "0" * 4000
    return json.dumps(value)  # escapes lone surrogates as \\udXXX, as JSON.stringify does


def emit_key(key: Any) -> str:
    return json.dumps(key if isinstance(key, str) else str(key))


def plain(value: Any) -> Any:
    """The value JSON.parse gives for ``emit(value)`` (last duplicate key wins)."""
    if isinstance(value, Deep):
        return value.value()
    if isinstance(value, Raw):
        number = json.loads(value)
        if isinstance(number, int) and abs(number) > 2**53 - 1:
            try:  # JSON.parse reads every number as a double
                return float(number)
            except OverflowError:
                return math.inf if number > 0 else -math.inf
        return number
    if isinstance(value, Pairs):
        return {key: plain(item) for key, item in value}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


# -- mutations --------------------------------------------------------------------------------


def paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 400) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = [prefix]
    stack = [(value, prefix)]
    while stack and len(found) < limit:
        node, path = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            found.append((*path, key))
            stack.append((child, (*path, key)))
    return found


def get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def replace(value: Any, path: tuple[Any, ...], item: Any) -> Any:
    if not path:
        return item
    parent = get(value, path[:-1])
    if isinstance(parent, Pairs):
        return value
    parent[path[-1]] = item
    return value


SCALARS: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], {}, "2026-08-01T20:00:00.000Z"]
NUMBERS: list[Any] = [
    Raw("1e400"), Raw("-1e400"), Raw("1" + "0" * 400), Raw("-0"), -0.0, 2**53 + 1, 2**53,
    -(2**53 + 1), 1e308, 5e-324, 10**400, Raw("1e-400"), 2**64, Raw("0.0"), 1e21, 1e-7,
]


def m_type_swap(rng: random.Random, doc: Any) -> Any:
    return replace(doc, rng.choice(paths(doc)), copy.deepcopy(rng.choice(SCALARS)))


def m_deep(rng: random.Random, doc: Any) -> Any:
    levels = rng.choice([50, 190, 199, 200, 201, 230, 254, 255, 256, 257, 300, 1000, 20000])
    path = rng.choice(paths(doc))
    inner: Any = get(doc, path) if rng.random() < 0.5 else 1
    return replace(doc, path, Deep(levels, inner))


def m_huge_string(rng: random.Random, doc: Any) -> Any:
    size = rng.choice([16_385, 100_000, 1_000_000, 3_000_000])
    return replace(doc, rng.choice(paths(doc)), rng.choice("a\u00e9\U0001f600") * size)


def m_huge_collection(rng: random.Random, doc: Any) -> Any:
    size = rng.choice([1_000, 10_001, 100_000, 300_000])
    path = rng.choice(paths(doc))
    node = get(doc, path)
    if isinstance(node, dict) and rng.random() < 0.5:
        sample = next(iter(node.values()), "x")
        grown: Any = {f"k{index}": sample for index in range(size)}
    else:
        sample = node[0] if isinstance(node, list) and node else rng.choice(["ab", 1, {"a": 1}])
        grown = [sample] * size
    if len(emit(sample)) * size > MAX_INPUT:  # a huge collection of huge members
        return doc
    return replace(doc, path, grown)


def m_surrogate(rng: random.Random, doc: Any) -> Any:
    lone = rng.choice(["\ud800", "\udfff", "\udbff", "a\ud800b"])
    path = rng.choice(paths(doc))
    node = get(doc, path)
    if isinstance(node, dict) and rng.random() < 0.6:
        node[lone] = rng.choice(SCALARS)
        return doc
    return replace(doc, path, (node + lone) if isinstance(node, str) else lone)


def m_nul(rng: random.Random, doc: Any) -> Any:
    path = rng.choice(paths(doc))
    node = get(doc, path)
    if isinstance(node, dict) and rng.random() < 0.5:
        node["\x00"] = 1
        return doc
    return replace(doc, path, (node + "\x00") if isinstance(node, str) else "\x00")


def m_number(rng: random.Random, doc: Any) -> Any:
    candidates = [p for p in paths(doc) if isinstance(get(doc, p), (int, float)) and not isinstance(get(doc, p), bool)]
    return replace(doc, rng.choice(candidates or paths(doc)), rng.choice(NUMBERS))


def m_duplicate_key(rng: random.Random, doc: Any) -> Any:
    candidates = [p for p in paths(doc) if isinstance(get(doc, p), dict) and get(doc, p)]
    if not candidates:
        return doc
    path = rng.choice(candidates)
    node = get(doc, path)
    key = rng.choice(list(node))
    pairs = Pairs(node.items())
    swapped = (key, copy.deepcopy(rng.choice(SCALARS)))
    pairs.insert(0, swapped) if rng.random() < 0.5 else pairs.append(swapped)
    return replace(doc, path, pairs)


def m_unknown_key(rng: random.Random, doc: Any) -> Any:
    candidates = [p for p in paths(doc) if isinstance(get(doc, p), dict)]
    if candidates:
        get(doc, rng.choice(candidates))[rng.choice(["zz", "__proto__", "constructor", ""])] = 1
    return doc


def m_drop_key(rng: random.Random, doc: Any) -> Any:
    candidates = [p for p in paths(doc) if isinstance(get(doc, p), dict) and get(doc, p)]
    if candidates:
        node = get(doc, rng.choice(candidates))
        del node[rng.choice(list(node))]
    return doc


# Huge inputs are slow to build and to run: about one case in 25 carries one.
WEIGHTS = {"huge_string": 1, "huge_collection": 1}
VALUE_MUTATIONS = {
    "type_swap": m_type_swap, "deep": m_deep, "huge_string": m_huge_string,
    "huge_collection": m_huge_collection, "surrogate": m_surrogate, "nul": m_nul,
    "number": m_number, "duplicate_key": m_duplicate_key, "unknown_key": m_unknown_key,
    "drop_key": m_drop_key,
}
TEXT_MUTATIONS = ["bom", "trailing_garbage", "truncate", "nul_byte", "invalid_utf8", "none"]


def mutate_text(rng: random.Random, text: bytes, name: str) -> bytes:
    if name == "bom":
        return b"\xef\xbb\xbf" + text
    if name == "trailing_garbage":
        return text + rng.choice([b"x", b"}", b" ,", b"\x00", b"{}", b"\n\n", b"//"])
    if name == "truncate":
        return text[: rng.randrange(max(1, len(text)))]
    if name == "nul_byte":
        at = rng.randrange(len(text) + 1)
        return text[:at] + b"\x00" + text[at:]
    if name == "invalid_utf8":
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice([b"\xff", b"\xed\xa0\x80", b"\xc0\xaf"]) + text[at:]
    return text


# -- one case ---------------------------------------------------------------------------------


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang


class Findings:
    def __init__(self) -> None:
        self.cases = 0
        self.calls = 0
        self.untyped: Counter[tuple[str, str, str]] = Counter()
        self.untyped_examples: dict[tuple[str, str, str], str] = {}
        self.slow: list[tuple[float, str, str, int, str]] = []
        self.drift: Counter[tuple[str, str]] = Counter()
        self.drift_examples: dict[tuple[str, str], str] = {}
        self.peak_ratio = 0.0
        self.peak_ratio_case = ""
        self.slowest = (0.0, "")

    def record_untyped(self, where: str, name: str, exc: BaseException, tag: str) -> None:
        key = (type(exc).__name__, where, name)
        self.untyped[key] += 1
        message = str(exc)[:160].encode("utf-8", "backslashreplace").decode()
        self.untyped_examples.setdefault(key, f"{tag} {message}")

    def record_drift(self, kind: str, name: str, tag: str) -> None:
        self.drift[(kind, name)] += 1
        self.drift_examples.setdefault((kind, name), tag)


def timed(findings: Findings, where: str, name: str, tag: str, size: int, call: Any) -> tuple[str, Any]:
    """Run ``call``: ("ok", value), ("refused", error) or ("untyped", exception)."""
    findings.calls += 1
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, HANG)
    try:
        outcome: tuple[str, Any] = ("ok", call())
    except ContractError as error:
        outcome = ("refused", error)
    except Hang as exc:
        outcome = ("untyped", exc)
        findings.record_untyped(where, name, exc, tag)
    except BaseException as exc:  # the finding itself
        if isinstance(exc, KeyboardInterrupt):
            raise
        outcome = ("untyped", exc)
        findings.record_untyped(where, name, exc, tag)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    elapsed = time.perf_counter() - started
    if elapsed > SLOW:
        findings.slow.append((elapsed, where, name, size, tag))
    if elapsed > findings.slowest[0]:
        findings.slowest = (elapsed, f"{where} {name} {size} bytes {tag}")
    return outcome


def run_case(rng: random.Random, corpus: list[tuple[str, Any]], findings: Findings, tag: str) -> bool:
    """One mutated document through every entry point; False when it was skipped."""
    schemas = wire_schemas()
    name, original = rng.choice(corpus)
    adapter = schemas[name]
    doc = copy.deepcopy(original)
    names = sorted(VALUE_MUTATIONS)
    chosen: list[str] = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        name_of = rng.choices(names, weights=[WEIGHTS.get(n, 8) for n in names])[0]
        if name_of not in chosen:
            chosen.append(name_of)
    for mutation in chosen:
        try:
            doc = VALUE_MUTATIONS[mutation](rng, doc)
        except (IndexError, KeyError, TypeError, ValueError):
            continue
    text_mutation = rng.choice(TEXT_MUTATIONS)
    tag = f"{tag} {name} {'+'.join(chosen)}/{text_mutation}"
    try:
        text = emit(doc).encode("utf-8", "surrogatepass")
    except RecursionError:
        text = b"[]"
    text = mutate_text(rng, text, text_mutation)
    if len(text) > MAX_INPUT:
        return False
    value = plain(doc)
    size = len(text)
    measure = size > BIG_INPUT
    if measure:
        tracemalloc.start()
    text_outcome = timed(findings, "parse(bytes)", name, tag, size, lambda: adapter.parse(text))
    if rng.random() < 0.3:
        try:
            as_str = text.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            as_str = None
        if as_str is not None:
            timed(findings, "parse(str)", name, tag, size, lambda: adapter.parse(as_str))
    value_outcome = timed(findings, "parse_value", name, tag, size, lambda: adapter.parse_value(value))
    if measure:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        ratio = peak / size
        if ratio > findings.peak_ratio:
            findings.peak_ratio, findings.peak_ratio_case = ratio, f"{tag} ({size} bytes, {peak} peak)"
    timed(findings, "canonical_digest(value)", name, tag, size, lambda: canonical_digest(value))
    # The text, read as JSON.parse reads it, gets the verdict of its value.
    if (
        text_mutation == "none"
        and all(outcome[0] != "untyped" for outcome in (text_outcome, value_outcome))
        and text_outcome[0] != value_outcome[0]
    ):
        findings.record_drift("text and value verdicts differ", name, tag)
    for kind, outcome in (("text", text_outcome), ("value", value_outcome)):
        if outcome[0] == "ok":
            round_trip(findings, adapter, name, f"{tag} [{kind}]", outcome[1], size)
    return True


def round_trip(findings: Findings, adapter: Any, name: str, tag: str, parsed: Any, size: int) -> None:
    state, wire = timed(findings, "to_wire", name, tag, size, lambda: adapter.to_wire(parsed))
    if state != "ok":
        return
    state, digest = timed(findings, "canonical_digest(wire)", name, tag, size, lambda: canonical_digest(wire))
    again = timed(findings, "parse_value(wire)", name, tag, size, lambda: adapter.parse_value(wire))
    if again[0] != "ok":
        findings.record_drift("wire form refused as a value", name, tag)
        return
    if adapter.to_wire(again[1]) != wire:
        findings.record_drift("wire form changes when read again", name, tag)
    try:
        text = json.dumps(wire).encode()
    except (ValueError, RecursionError):
        return
    from_text = timed(findings, "parse(wire text)", name, tag, size, lambda: adapter.parse(text))
    if from_text[0] != "ok":
        findings.record_drift("wire form refused as JSON text", name, tag)
    elif adapter.to_wire(from_text[1]) != wire:
        findings.record_drift("wire text gives another value", name, tag)
    elif state == "ok":
        redigest = timed(findings, "canonical_digest(rewire)", name, tag, size,
                         lambda: canonical_digest(adapter.to_wire(from_text[1])))
        if redigest != ("ok", digest):
            findings.record_drift("digest changes on a round trip", name, tag)


# -- the run ------------------------------------------------------------------------------------


def report(findings: Findings, seconds: float, seed: int) -> dict[str, Any]:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "seed": seed,
        "seconds": round(seconds, 1),
        "cases": findings.cases,
        "calls": findings.calls,
        "untyped_exceptions": sum(findings.untyped.values()),
        "untyped": [
            {"exception": k[0], "entry": k[1], "schema": k[2], "count": n, "example": findings.untyped_examples[k]}
            for k, n in findings.untyped.most_common()
        ],
        "slow_inputs": len(findings.slow),
        "slow": [
            {"seconds": round(s, 2), "entry": w, "schema": n, "bytes": b, "case": t}
            for s, w, n, b, t in sorted(findings.slow, reverse=True)[:20]
        ],
        "slowest": {"seconds": round(findings.slowest[0], 3), "case": findings.slowest[1]},
        "peak_rss_bytes": rss,
        "peak_traced_per_input_byte": round(findings.peak_ratio, 2),
        "peak_traced_case": findings.peak_ratio_case,
        "drift": [
            {"kind": k[0], "schema": k[1], "count": n, "example": findings.drift_examples[k]}
            for k, n in findings.drift.most_common()
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conformance", default=DEFAULT_CONFORMANCE, help="conformance documents (.jsonl.gz)")
    parser.add_argument("--report", help="also write the JSON report to this file")
    parser.add_argument("--replay", help="SEED:CASE: run one case again and print it")
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))
    signal.signal(signal.SIGALRM, _alarm)
    corpus = load_corpus(args.conformance)
    findings = Findings()
    if args.replay:
        seed_text, case_text = args.replay.split(":")
        seed, case = int(seed_text), int(case_text)
        rng = random.Random(f"{seed}:{case}")
        run_case(rng, corpus, findings, f"{seed}:{case}")
        print(json.dumps(report(findings, 0, seed), indent=2))
        return 0
    started = time.monotonic()
    number = 0
    while time.monotonic() - started < args.seconds:
        rng = random.Random(f"{args.seed}:{number}")
        if run_case(rng, corpus, findings, f"{args.seed}:{number}"):
            findings.cases += 1
        number += 1
    summary = report(findings, time.monotonic() - started, args.seed)
    text = json.dumps(summary, indent=2, ensure_ascii=True)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 1 if summary["untyped_exceptions"] or summary["drift"] else 0


if __name__ == "__main__":
    sys.exit(main())
