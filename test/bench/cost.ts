/**
 * `npx tsx test/bench/cost.ts`: what 1,000 runs cost on AWS, from what the local stack measures —
 * state transitions (usage.stateTransitions), Lambda invocations and their durations (the execution
 * history), model calls — at the offline model with no latency, so the durations are Stepwise's own.
 * A real model's wait is added per model call (MODEL_SECONDS, default 3 s), since the function waits
 * for it. Prices: us-east-1, arm64, Standard workflows (2026).
 */
import { Behind } from "../support/aws.js";
import { Client } from "../support/client.js";
import { startStack } from "../support/localStack.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MODEL_SECONDS = Number(process.env.MODEL_SECONDS ?? 3);
const MEMORY_GB = 0.5;
const PRICE = { transition: 0.000025, gbSecond: 0.0000133334, request: 0.2 / 1e6 };

const WORKLOADS = [
  { name: "react", body: { input: "Compute 17*23 and tell me the result", mode: "react" } },
  { name: "plan_solve", body: { input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" } },
];

const stack = await startStack({ OFFLINE_MODEL_LATENCY_MS: "0" }, [], { exposeEndpoints: true });
const behind = new Behind(stack.endpoints!);
try {
  const client = new Client(stack.url, stack.apiKey);
  console.log(`${RUNS} runs each, model wait ${MODEL_SECONDS} s per call, ${MEMORY_GB * 1024} MB Lambdas`);
  console.log("workload     transitions  invocations  lambda ms (own)  model calls  $ per 1,000 runs (SFN + Lambda)");
  for (const workload of WORKLOADS) {
    const rows: { transitions: number; invocations: number; ms: number; calls: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { runId } = await client.submit(workload.body);
      await client.waitFor(runId, ["succeeded", "failed"], 120_000);
      // The transition count is kept once the execution's history is complete.
      let run = await client.run(runId);
      for (let tries = 0; run.usage.stateTransitions === undefined && tries < 50; tries++) {
        await new Promise((r) => setTimeout(r, 100));
        run = await client.run(runId);
      }
      const executionArn = `${stack.endpoints!.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
      const { events = [] } = await behind.sfn.send(
        new (await import("@aws-sdk/client-sfn")).GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }),
      );
      const entered = new Map<string, number>();
      let ms = 0;
      let invocations = 0;
      for (const event of events) {
        const name = event.stateEnteredEventDetails?.name ?? event.stateExitedEventDetails?.name;
        if (event.type === "TaskStateEntered") entered.set(`${name}`, event.timestamp!.getTime());
        if (event.type === "TaskStateExited") {
          invocations++;
          ms += event.timestamp!.getTime() - (entered.get(`${name}`) ?? event.timestamp!.getTime());
        }
      }
      rows.push({ transitions: run.usage.stateTransitions ?? 0, invocations, ms, calls: run.usage.llmCalls });
    }
    const mean = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((sum, r) => sum + pick(r), 0) / rows.length;
    const transitions = mean((r) => r.transitions);
    const invocations = mean((r) => r.invocations);
    const ms = mean((r) => r.ms);
    const calls = mean((r) => r.calls);
    const lambdaSeconds = ms / 1000 + calls * MODEL_SECONDS;
    const perRun = transitions * PRICE.transition + lambdaSeconds * MEMORY_GB * PRICE.gbSecond + invocations * PRICE.request;
    console.log(
      `${workload.name.padEnd(12)} ${transitions.toFixed(1).padStart(11)}  ${invocations.toFixed(1).padStart(11)}  ${ms.toFixed(0).padStart(15)}  ${calls.toFixed(1).padStart(11)}  $${(perRun * 1000).toFixed(3)} (SFN $${(transitions * PRICE.transition * 1000).toFixed(3)})`,
    );
  }
  const rss = process.memoryUsage().rss;
  void rss;
} finally {
  behind.destroy();
  await stack.stop();
}
