// Reads simulated suites (JSON lines: {baseline: [[...]], candidate: [[...]]} per task) on
// stdin and prints, per suite, tangle-network/agent-eval's own decision on them, paired by
// scenario:rep as agent-eval pairs them: decidePairedPromotion (Tango score interval and
// McNemar veto for pass/fail, bootstrap or exact sign test otherwise) and its plain
// paired bootstrap of the mean. The bundle path (argv[2]) is agent-eval built with esbuild
// from a fetched copy (see benchmarks/agent_eval_agreement.py); its code is never committed.
import readline from 'node:readline'
import { pathToFileURL } from 'node:url'

const ae = await import(pathToFileURL(process.argv[2]).href)
const options = { threshold: 0, confidence: 0.95, resamples: 2000, seed: 1337, minPairs: 3 }
const rl = readline.createInterface({ input: process.stdin })
for await (const line of rl) {
  if (!line.trim()) continue
  const suite = JSON.parse(line)
  const before = suite.baseline.flat()
  const after = suite.candidate.flat()
  const decision = ae.decidePairedPromotion(before, after, options)
  const bootstrap = ae.pairedBootstrap(before, after, { ...options, statistic: 'mean' })
  process.stdout.write(JSON.stringify({
    promote: decision.promote, method: decision.method, low: decision.low, high: decision.high,
    sufficient: decision.sufficient, veto: decision.exactTestVetoes,
    indeterminate: decision.indeterminate, bootstrapShip: bootstrap.low > 0,
  }) + '\n')
}
