/**
 * `npm run bench -- policy`: what tool policies cost. Per tool call, the decision the agent loop
 * makes before the call runs (shared/policy/decide.ts: one Cedar request over every statement of
 * the tenant's policies), for small and large arguments against a tenant with several policies
 * (goal: p95 ≤ 5 ms). Once per container, loading the engine (a fresh process, as a Lambda's first
 * policy decision); once per turn, compiling the tenant's policies; per save, the check against the
 * catalogue's schema. And the layer that ships the engine, zipped. Figures only.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { buildPolicyEngine } from "../../infra/aws/policyEngineLayer.js";
import type { ToolPolicy } from "../../shared/contracts/policies.js";
import { decideCall } from "../../shared/policy/decide.js";
import { checkPolicy, compilePolicies } from "../../shared/policy/policySet.js";
import type { Tool } from "../../shared/ports/tools.js";
import { builtinTools } from "../../shared/tools/builtins.js";
import { ToolRegistry } from "../../shared/tools/registry.js";
import { defineTool } from "../../shared/tools/tool.js";

const CALLS = Number(process.env.BENCH_POLICY_CALLS ?? 2_000);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** A catalogue like a tenant's with a few MCP servers: the built-ins and 60 tools with typed arguments. */
function catalogue(): ToolRegistry {
  const mcp = Array.from({ length: 60 }, (_, i) =>
    defineTool({
      name: `crm__tool_${i}`,
      description: "A CRM tool.",
      access: i % 2 ? "write" : "read",
      parameters: z.object({ amount: z.number().int(), note: z.string(), tags: z.array(z.string()).optional() }),
      async run() {
        return "ok";
      },
    }),
  );
  return new ToolRegistry([...builtinTools, ...(mcp as Tool[])]);
}

/** Ten policies of two or three statements each, most of them about other tools than the call's. */
function policies(): ToolPolicy[] {
  const stamp = "2026-11-28T00:00:00.000Z";
  return Array.from({ length: 10 }, (_, i) => ({
    schemaVersion: 1 as const,
    name: `policy-${i}`,
    version: 1,
    mode: i % 3 === 0 ? ("log_only" as const) : ("enforce" as const),
    createdAt: stamp,
    cedar: [
      `@reason("Artifacts may have at most ${1000 + i} characters.")\nforbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > ${1000 + i} };`,
      `@approval\n@reason("Amounts over ${500 + i} need approval.")\nforbid(principal, action == Action::"crm__tool_${i}", resource) when { context.arguments.amount > ${500 + i} };`,
      `forbid(principal, action, resource) when { context.spend.tokens > ${1_000_000 + i} && resource.access == "write" };`,
    ].join("\n"),
  }));
}

export async function benchPolicy(): Promise<void> {
  console.log(`\n# Tool policies (Cedar): the decision before each tool call, ${CALLS} calls per case, 10 policies of 3 statements`);
  // Loading the engine, in a fresh process: what a container's first policy decision adds.
  const load = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      'const t = performance.now(), c = process.cpuUsage(); await import("@cedar-policy/cedar-wasm/nodejs"); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify([performance.now() - t, (u.user + u.system) / 1000]));',
    ],
    { encoding: "utf8" },
  );
  const [loadMs, loadCpuMs] = JSON.parse(load.stdout) as [number, number];
  console.log(`engine load (once per container):  ${loadMs.toFixed(0)} ms wall, ${loadCpuMs.toFixed(0)} ms CPU`);

  const tools = catalogue();
  const set = policies();
  let started = performance.now();
  const compiled = await compilePolicies(set);
  console.log(`compile 10 policies (once per set and container): ${(performance.now() - started).toFixed(1)} ms`);
  started = performance.now();
  await checkPolicy(set[1]!.cedar, tools);
  console.log(`check one policy on save:           ${(performance.now() - started).toFixed(1)} ms (schema of ${tools.names.length} tools)`);

  const principal = { tenantId: "t1", agent: "analyst", sessionId: "ses_1" };
  const spend = { promptTokens: 12_000, completionTokens: 3_000, llmCalls: 6, toolCalls: 4 };
  const cases: { name: string; tool: string; args: unknown }[] = [
    { name: "calculator (small arguments)", tool: "calculator", args: { expression: "(120/8)+2^5" } },
    { name: "crm__tool_3 (typed arguments)", tool: "crm__tool_3", args: { amount: 800, note: "renewal", tags: ["a", "b"] } },
    { name: "write_artifact, 1 KB content", tool: "write_artifact", args: { filename: "a.md", content: "x".repeat(1_000) } },
    { name: "write_artifact, 100 KB content", tool: "write_artifact", args: { filename: "a.md", content: "x".repeat(100_000) } },
  ];
  for (const { name, tool, args } of cases) {
    const call = { tool: tools.get(tool)!, arguments: args, spend, turn: 3 };
    for (let i = 0; i < 50; i++) await decideCall(compiled, principal, call, tools); // warm-up
    const times: number[] = [];
    const cpu: number[] = [];
    let verdict = "";
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      const c = process.cpuUsage();
      verdict = (await decideCall(compiled, principal, call, tools)).verdict;
      const used = process.cpuUsage(c);
      times.push(performance.now() - t);
      cpu.push((used.user + used.system) / 1000);
    }
    // Wall time on a shared machine includes waiting for a core; CPU time is the decision's own.
    console.log(
      `${name.padEnd(32)} wall p50 ${quantile(times, 0.5).toFixed(2)} / p95 ${quantile(times, 0.95).toFixed(2)} ms, CPU p50 ${quantile(cpu, 0.5).toFixed(2)} / p95 ${quantile(cpu, 0.95).toFixed(2)} ms (${verdict}; goal p95 ≤ 5 ms)`,
    );
  }

  // The layer as Lambda receives it.
  const work = mkdtempSync(path.join(tmpdir(), "stepwise-policy-layer-"));
  try {
    buildPolicyEngine(path.join(work, "nodejs/node_modules"));
    execFileSync("zip", ["-qrX", "layer.zip", "nodejs"], { cwd: work });
    console.log(
      `policy engine layer: ${(statSync(path.join(work, "layer.zip")).size / 1024 / 1024).toFixed(2)} MB zipped (agent functions and the API; not in their bundles)`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
