import { availableParallelism, loadavg } from "node:os";
import { Client } from "../support/client.js";
import { startScriptedModel } from "../support/scriptedModel.js";
import { ScriptRouter } from "../support/scriptedRoles.js";
import { startBenchStack } from "./benchStack.js";
import { W16, workloadScenario } from "./workloads.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 8);

/**
 * `npm run bench -- replay`: a W16 run (plan → 16 parallel tasks → replan → summary) recorded
 * against an instant model, then replayed from its journal RUNS times: the time from
 * `POST …/replay` to a comparison that is no longer running (target ≤ 2 s), the model calls the
 * replays made (none), and what the journal holds per run: its records and their JSON size, and
 * the part of it that replay adds to every run (the request fingerprints of model calls).
 */
export async function benchReplay(): Promise<void> {
  const router = new ScriptRouter(workloadScenario(W16));
  const model = await startScriptedModel(router.script, { latencyMs: 0 });
  const stack = await startBenchStack({ OPENAI_BASE_URL: model.url, STEPWISE_MODEL: "bench-model", MAX_CONCURRENCY: "16" });
  try {
    const client = new Client(stack.url, stack.apiKey);
    const { runId } = await client.submit({ input: "[[replay-bench]] Compute every item of the bench plan.", mode: "plan_solve" });
    const recorded = await client.waitForEnd(runId, 120_000);
    if (recorded.run.status !== "succeeded") throw new Error(`the recorded run ${recorded.run.status}`);
    const calls = router.of("replay-bench").length;
    const exported = (
      await client.request<{ journal: { kind: string; value: unknown; fingerprint?: string }[] }>("GET", `/v1/runs/${runId}/export`)
    ).body.journal;
    const bytes = exported.reduce((sum, r) => sum + JSON.stringify(r).length, 0);
    const fingerprints = exported.reduce((sum, r) => sum + (r.fingerprint ? r.fingerprint.length + '"fingerprint":"",'.length : 0), 0);
    const loadBefore = loadavg()[0];
    const durations: number[] = [];
    const outcomes: string[] = [];
    let firstDivergence: unknown;
    for (let i = 0; i <= RUNS; i++) {
      const started = performance.now();
      const { body } = await client.request<{ runId: string }>("POST", `/v1/runs/${runId}/replay`);
      let comparison = (await client.request<{ status: string }>("GET", `/v1/runs/${body.runId}/replay`)).body;
      while (comparison.status === "running") {
        await new Promise((r) => setTimeout(r, 10));
        comparison = (await client.request<{ status: string }>("GET", `/v1/runs/${body.runId}/replay`)).body;
      }
      if (i > 0) durations.push(performance.now() - started); // the first replay warms the handlers
      outcomes.push(comparison.status);
      if (comparison.status !== "identical") firstDivergence ??= comparison;
    }
    const load = loadavg()[0];
    const sorted = [...durations].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(
      `\n# Replay of a W16 run (16 tasks) from its journal, ${RUNS} replays after one warm-up (load average ${loadBefore.toFixed(1)} before, ${load.toFixed(1)} after, on ${availableParallelism()} cores${loadBefore > availableParallelism() ? ": not quiet, figures high" : ""})`,
    );
    console.log(
      `replay (POST to comparison): median ${median.toFixed(0)} ms, min ${sorted[0].toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; target ≤ 2000 ms: ${sorted.at(-1)! <= 2000 ? "met" : "NOT met"}`,
    );
    console.log(`comparisons: ${[...new Set(outcomes)].map((o) => `${outcomes.filter((x) => x === o).length} ${o}`).join(", ")}`);
    if (firstDivergence) console.log(`first divergence: ${JSON.stringify(firstDivergence).slice(0, 2_000)}`);
    console.log(`model calls: recorded run ${calls}, all replays together ${router.of("replay-bench").length - calls}`);
    console.log(
      `journal of the recorded run: ${exported.length} records, ${bytes} bytes of JSON; request fingerprints (new with replay) ${fingerprints} bytes on ${exported.filter((r) => r.fingerprint).length} model calls (${((fingerprints / (bytes - fingerprints)) * 100).toFixed(1)}% more than without them)`,
    );
  } finally {
    await stack.stop();
    await model.close();
  }
}
