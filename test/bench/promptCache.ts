/**
 * Prompt caching: providers reuse the longest prefix a request shares with one they saw shortly
 * before. For each agent role, the share of each request's prompt tokens that repeat the previous
 * request's prefix (tools, then messages, in the order providers read them), over the docs' (docs/walkthroughs.md)
 * plan_solve and react walk-throughs, without and then with a tenant's operator instructions (they
 * sit after the tool list, so the share should not drop). Prints figures; asserts nothing.
 */
import { startOfflineModel } from "../../infra/offlineModel/server.js";
import { tokenCounterFor } from "../../shared/memory/tokens.js";
import { Client } from "../support/client.js";
import { startStack } from "../support/localStack.js";
import { type ProxiedRequest, startModelProxy } from "../support/modelProxy.js";

const RUNS = Number(process.env.BENCH_PROMPT_RUNS ?? 3);

/** The prompt as a provider reads it: the tool definitions, then each message in order. */
function promptText(request: ProxiedRequest): string {
  return JSON.stringify(request.body.tools ?? []) + request.body.messages.map((m: unknown) => JSON.stringify(m)).join("");
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const INSTRUCTIONS = "House rules: answer in English, cite every figure, and keep reports under one page.";

export async function benchPromptCache(): Promise<void> {
  console.log(
    `\n# Prompt prefix reuse per role (${RUNS} plan_solve and ${RUNS} react runs; share of prompt tokens repeating the previous request's prefix)`,
  );
  const model = await startOfflineModel();
  const proxy = await startModelProxy(model.url);
  const stack = await startStack({ OPENAI_BASE_URL: proxy.url, STEPWISE_MODEL: "stepwise-offline", OFFLINE_MODEL_LATENCY_MS: "0" }, []);
  const variants: { name: string; requests: ProxiedRequest[] }[] = [];
  try {
    const client = new Client(stack.url, stack.apiKey);
    for (const instructions of ["", INSTRUCTIONS]) {
      await client.request("PUT", "/v1/settings", { instructions });
      const from = proxy.requests.length;
      for (let i = 0; i < RUNS; i++) {
        for (const mode of ["plan_solve", "react"] as const) {
          const { runId } = await client.submit({
            input: "Compute 17*23 and (120/8)+2^5, then write a short report",
            mode,
            sessionId: `bench-cache-${mode}${instructions ? "-instructed" : ""}`,
          });
          await client.waitFor(runId, ["succeeded", "failed"], 120_000);
        }
      }
      variants.push({
        name: instructions ? "with the tenant's instructions" : "without instructions",
        requests: proxy.requests.slice(from),
      });
    }
  } finally {
    await stack.stop();
    await Promise.all([proxy.close(), model.close()]);
  }
  for (const variant of variants) printShares(variant.name, variant.requests);
}

function printShares(name: string, requests: readonly ProxiedRequest[]): void {
  const counter = tokenCounterFor("gpt-4o-mini");
  const last = new Map<string, string>();
  const shares = new Map<string, number[]>();
  for (const request of requests) {
    const text = promptText(request);
    const previous = last.get(request.role);
    last.set(request.role, text);
    if (previous === undefined) continue;
    const repeated = counter.count(text.slice(0, commonPrefix(previous, text)));
    shares.set(request.role, [...(shares.get(request.role) ?? []), repeated / Math.max(1, counter.count(text))]);
  }
  console.log(`\n${name}`);
  console.log("role        requests  mean share  min share");
  for (const [role, values] of shares) {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    console.log(
      `${role.padEnd(10)}  ${String(values.length + 1).padStart(8)}  ${(mean * 100).toFixed(1).padStart(9)}%  ${(Math.min(...values) * 100).toFixed(1).padStart(8)}%`,
    );
  }
}
