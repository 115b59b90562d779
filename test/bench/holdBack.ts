/**
 * The guardrails' hold-back window (shared/guardrails/holdBack.ts): what it adds to the first
 * streamed byte a client can read. A model streams a reply a few characters at a time (every
 * BENCH_TOKEN_MS, 20 ms by default: ~50 tokens a second) through the agents' text stream into the
 * event log (in memory), once without output checks and once with PII redaction, a regular
 * expression and a prompt-injection check; the time from the first token to the first agent.delta
 * written is measured per reply. Prints the median and p95 of each and the difference; the goal is
 * at most 250 ms added. Asserts nothing.
 */
import { setTimeout as delay } from "node:timers/promises";
import { textStream } from "../../shared/agent/deltas.js";
import { GuardrailChecks } from "../../shared/contracts/guardrails.js";
import { TextGuard } from "../../shared/guardrails/textGuard.js";
import { memoryPorts } from "../../shared/testing/memoryPorts.js";

const REPLIES = Number(process.env.BENCH_REPLIES ?? 20);
const TOKEN_MS = Number(process.env.BENCH_TOKEN_MS ?? 20);
const REPLY =
  "The quarterly figures are in: revenue rose 12% to 4.2 million, driven by the northern region. Contact ana.lopez@example.com for the breakdown, or call +1 415 555 0134.";
const CHECKS = GuardrailChecks.parse([
  { kind: "pii", action: "redact" },
  { kind: "regex", name: "codename", action: "redact", pattern: "project\\s+falcon", flags: "i" },
  { kind: "prompt_injection", action: "block" },
]);

/** Milliseconds from the first token to the first agent.delta event of one streamed reply. */
async function firstByte(guarded: boolean): Promise<number> {
  const { ports } = memoryPorts();
  const runId = "run_bench";
  let firstWrite: number | undefined;
  const events = ports.events;
  const append = events.append.bind(events);
  events.append = async (id, bodies, options) => {
    if (firstWrite === undefined && bodies.some((b) => b.type === "agent.delta")) firstWrite = performance.now();
    return append(id, bodies, options);
  };
  const usage = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
  const guard = guarded ? new TextGuard(ports, runId, CHECKS, { agent: "react" }, usage) : undefined;
  const stream = textStream(ports, runId, { agent: "react" }, { guard });
  const tokens = REPLY.match(/.{1,4}/gs) ?? [];
  const start = performance.now();
  for (const token of tokens) {
    stream.onText(token);
    if (firstWrite !== undefined) break;
    await delay(TOKEN_MS);
  }
  await stream.close();
  return (firstWrite ?? performance.now()) - start;
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

export async function benchHoldBack(): Promise<void> {
  console.log(`\nHold-back window: first streamed byte, ${REPLIES} replies each, a token every ${TOKEN_MS} ms`);
  const plain: number[] = [];
  const guarded: number[] = [];
  for (let i = 0; i < REPLIES; i++) {
    plain.push(await firstByte(false));
    guarded.push(await firstByte(true));
  }
  const row = (name: string, values: number[]) =>
    console.log(
      `  ${name.padEnd(30)} median ${quantile(values, 0.5).toFixed(0).padStart(4)} ms   p95 ${quantile(values, 0.95).toFixed(0).padStart(4)} ms`,
    );
  row("no output checks", plain);
  row("PII + regex + injection checks", guarded);
  const added = quantile(guarded, 0.5) - quantile(plain, 0.5);
  const added95 = quantile(guarded, 0.95) - quantile(plain, 0.95);
  console.log(`  added by the hold-back window: median ${added.toFixed(0)} ms, p95 ${added95.toFixed(0)} ms (goal: at most 250 ms)`);
}
