// Node side of the side-by-side harness (our own code; the reference it imports is not).
//
//   node node_worker.mjs serve REFERENCE_INDEX_JS
//       long-lived worker: one JSON command per stdin line, one JSON reply per stdout line
//   node node_worker.mjs cold REFERENCE_INDEX_JS NAME DOCUMENT_PATH
//       fresh-process first use: import the reference, validate one document, print the
//       milliseconds since this script started and the verdict
//
// Commands of `serve` (the Python worker answers the same ones):
//   {"op": "load", "key", "schema", "path"}   read JSON-text lines; reply the verdicts ("1"/"0")
//   {"op": "validate", "key"}                  one pass: JSON.parse + safeParse of every line
//   {"op": "load_digest", "key", "path"}       read one JSON value; reply its digest
//   {"op": "digest", "key", "iterations"}      one pass: canonicalCandidateDigest, N times
//   {"op": "quit"}
import fs from "node:fs";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const scriptStart = performance.now();
const [mode, referencePath, ...rest] = process.argv.slice(2);
const reference = await import(pathToFileURL(referencePath).href);

function schemaOf(name) {
  const schema = reference[`${name}Schema`] ?? reference[`${name[0].toLowerCase()}${name.slice(1)}Schema`];
  if (!schema) throw new Error(`the reference exports no schema named ${name}`);
  return schema;
}

if (mode === "cold") {
  const [name, path] = rest;
  const result = schemaOf(name).safeParse(JSON.parse(fs.readFileSync(path, "utf8")));
  const elapsed = performance.now() - scriptStart;
  console.log(JSON.stringify({ ms: elapsed, accepted: result.success }));
  process.exit(0);
}

const workloads = new Map();
const values = new Map();

// Wall seconds, and CPU seconds of the whole process (V8's helper threads included).
function timed(body) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = body();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { ...result, seconds, cpu: (used.user + used.system) / 1e6 };
}

function pass(schema, lines) {
  return timed(() => {
    let accepted = 0;
    for (const line of lines) {
      if (schema.safeParse(JSON.parse(line)).success) accepted++;
    }
    return { accepted };
  });
}

function handle(command) {
  switch (command.op) {
    case "load": {
      const lines = fs.readFileSync(command.path, "utf8").split("\n").filter((line) => line.length > 0);
      const schema = schemaOf(command.schema);
      workloads.set(command.key, { schema, lines });
      const verdicts = lines.map((line) => (schema.safeParse(JSON.parse(line)).success ? "1" : "0")).join("");
      // Warm the JIT: at least three passes and one second.
      const warmStart = performance.now();
      for (let i = 0; i < 3 || performance.now() - warmStart < 1000; i++) pass(schema, lines);
      return { verdicts };
    }
    case "validate": {
      const { schema, lines } = workloads.get(command.key);
      return pass(schema, lines);
    }
    case "load_digest": {
      const value = JSON.parse(fs.readFileSync(command.path, "utf8"));
      values.set(command.key, value);
      return { digest: reference.canonicalCandidateDigest(value) };
    }
    case "digest": {
      const value = values.get(command.key);
      return timed(() => {
        for (let i = 0; i < command.iterations; i++) reference.canonicalCandidateDigest(value);
        return {};
      });
    }
    case "quit":
      process.exit(0);
    default:
      throw new Error(`unknown op ${command.op}`);
  }
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of input) {
  let reply;
  try {
    reply = handle(JSON.parse(line));
  } catch (error) {
    reply = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
