/**
 * `npm run bench`: figures, not assertions (these machines are shared and noisy).
 *
 * 1. Context budget on a long session: the same multi-turn session run twice, once with a small
 *    prompt budget (older turns cut) and once with an unlimited one (the full history sent every
 *    time). Prints prompt tokens per run and checks that the answers are the same.
 * 2. Orchestration overhead: plan_solve and react runs against a model that answers at once, so
 *    the time is Stepwise's own (state machine, DynamoDB, handlers); prints median and spread.
 * 3. MCP tool calls: a session per call (what agents do) against a session kept open (mcpCalls.ts).
 * 4. Workloads W1 and W16 (test/bench/workloads.ts) against a model with a fixed latency: the ratio
 *    to the critical path, the gaps, DynamoDB requests, CPU and memory.
 * 5. Prompt prefix reuse per role (promptCache.ts): how much of each request a provider's prompt cache can reuse.
 * 6. The event log written by 16 and 40 executors in separate processes (eventLog.ts): puts per
 *    append and the append time's p99.
 * 7. Capacity on paper (capacity.ts): each AWS quota's use at 1,000 and 10,000 runs in flight, and the cost per 1,000 runs.
 * 8. Bundles: each function's zipped size and the cold import of its bundled handler (bundles.ts).
 * 9. Stream windows (streamWindow.ts): what a reconnection costs a watcher, against what a stream
 *    whose client left costs until its window ends, per STREAM_MAX_SECONDS.
 * 10. Tool policies (policy.ts): the Cedar decision before each tool call (p95), the engine's load and its layer.
 * 11. Guardrails (holdBack.ts): the delay the hold-back window adds to the first streamed byte.
 * 12. Replay (replay.ts): a 16-task run replayed from its journal, and what the journal holds per run.
 * 13. Budgets (budget.ts): the spend ledger's writes per model call, with and without budgets.
 *
 * `npm run bench -- workloads` (or `context`, `overhead`, `mcp`, `sandbox`, `prompts`, `eventlog`, `capacity`, `bundles`, `stream`, `policy`, `holdback`, `replay`, `budget`) runs one part; BENCH_RUNS, BENCH_LATENCY_MS.
 */

import { Client } from "../support/client.js";
import { startStack } from "../support/localStack.js";
import { benchWorkload, printReport, W1, W16 } from "./workloads.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 20);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);

async function session(budget: string): Promise<{ tokens: number[]; answers: (string | null)[] }> {
  const stack = await startStack({ CONTEXT_BUDGET_TOKENS: budget, OFFLINE_MODEL_LATENCY_MS: "0" });
  try {
    const client = new Client(stack.url, stack.apiKey);
    const tokens: number[] = [];
    const answers: (string | null)[] = [];
    for (let turn = 1; turn <= TURNS; turn++) {
      const { runId } = await client.submit({
        input: `Turn ${turn}: what is ${turn}*37+${turn}? Explain the figure in one sentence for my notes on this long session.`,
        mode: "react",
        sessionId: "bench-session",
      });
      const run = await client.waitFor(runId, ["succeeded", "failed"], 60_000);
      tokens.push(run.usage.promptTokens);
      answers.push(run.result);
    }
    return { tokens, answers };
  } finally {
    await stack.stop();
  }
}

async function overhead(mode: "plan_solve" | "react"): Promise<number[]> {
  const stack = await startStack({ OFFLINE_MODEL_LATENCY_MS: "0" });
  try {
    const client = new Client(stack.url, stack.apiKey);
    const durations: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const { runId } = await client.submit({ input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode });
      const run = await client.waitFor(runId, ["succeeded"], 60_000);
      // The run's own times (accepted, ended): the client's polling adds nothing to them.
      if (i > 0) durations.push(Date.parse(run.endedAt!) - Date.parse(run.createdAt)); // the first run warms the handlers
    }
    return durations;
  } finally {
    await stack.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const parts = process.argv.slice(2);
const wanted = (part: string) => parts.length === 0 || parts.includes(part);

if (wanted("workloads")) {
  const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 100);
  console.log(`# Workloads against a model answering in ${latencyMs} ms, instant tool`);
  for (const workload of [W1, W16]) printReport(await benchWorkload(workload, { runs: RUNS, latencyMs }));
}

if (wanted("context")) {
  console.log(`# Context budget on a long session (${TURNS} react runs in one session)`);
  const budgeted = await session("800");
  const full = await session("100000000");
  console.log("run  prompt tokens (budget 800)  prompt tokens (full history)");
  for (let i = 0; i < TURNS; i++)
    console.log(`${String(i + 1).padStart(3)}  ${String(budgeted.tokens[i]).padStart(27)}  ${String(full.tokens[i]).padStart(28)}`);
  const same = budgeted.answers.every((answer, i) => answer === full.answers[i]);
  console.log(
    `total prompt tokens: budget ${sum(budgeted.tokens)}, full ${sum(full.tokens)} (${((1 - sum(budgeted.tokens) / sum(full.tokens)) * 100).toFixed(1)}% fewer)`,
  );
  console.log(`answers identical: ${same ? "yes" : "NO"} (${TURNS} of ${TURNS} compared)`);
}

if (wanted("overhead")) {
  console.log(`\n# Orchestration overhead with an instant model (${RUNS} runs each, after one warm-up)`);
  for (const mode of ["react", "plan_solve"] as const) {
    const durations = await overhead(mode);
    console.log(
      `${mode.padEnd(10)} median ${median(durations).toFixed(0)} ms, min ${Math.min(...durations).toFixed(0)} ms, max ${Math.max(...durations).toFixed(0)} ms (accepted to succeeded, by the run's own times)`,
    );
  }
}

if (wanted("mcp")) {
  console.log("\n# MCP tool calls over Streamable HTTP on loopback (50 each, after one warm-up)");
  const { mcpCallFigures } = await import("./mcpCalls.js");
  for (const line of await mcpCallFigures()) console.log(line);
}
if (wanted("bundles")) {
  console.log(`\n# Bundles: each function's zipped code and the cold import of its handler`);
  const { bundleFigures, printBundles } = await import("./bundles.js");
  printBundles(bundleFigures());
}
if (wanted("sandbox")) {
  const { benchCodeInterpreter, benchSandbox, benchSandboxMemory } = await import("./sandbox.js");
  await benchSandbox();
  await benchCodeInterpreter();
  await benchSandboxMemory();
}
if (wanted("prompts")) await (await import("./promptCache.js")).benchPromptCache();
if (wanted("eventlog")) await (await import("./eventLog.js")).benchEventLog();
if (wanted("stream")) await (await import("./streamWindow.js")).benchStreamWindow();
if (wanted("holdback")) await (await import("./holdBack.js")).benchHoldBack();
if (wanted("capacity")) await (await import("./capacity.js")).benchCapacity();
if (wanted("policy")) await (await import("./policy.js")).benchPolicy();
if (wanted("replay")) await (await import("./replay.js")).benchReplay();
if (wanted("budget")) await (await import("./budget.js")).benchBudget();
