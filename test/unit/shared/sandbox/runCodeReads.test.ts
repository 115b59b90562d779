import { describe, expect, it } from "vitest";
import type { SandboxResult } from "../../../../shared/contracts/sandbox.js";
import type { CodeSandbox } from "../../../../shared/ports/sandbox.js";
import type { Tool } from "../../../../shared/ports/tools.js";
import { acceptRun } from "../../../../shared/run/acceptRun.js";
import { SandboxBound } from "../../../../shared/sandbox/sandboxBound.js";
import { agentTurn } from "../../../../shared/steps/agentTurn.js";
import { plan } from "../../../../shared/steps/plan.js";
import { startRun } from "../../../../shared/steps/startRun.js";
import { MemoryTenantLeases } from "../../../../shared/testing/memoryTenantLeases.js";
import { sandboxResult } from "../../../../shared/testing/sandboxResult.js";
import { ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";
import { planOutcome, withRun } from "../../../support/memoryRun.js";

/**
 * run_code on the agent's path, over the in-memory ports: the step read the run (its tenant, and
 * the tenant's own sandbox limit as recorded when the run was submitted), so each call's bound is
 * one conditional write (the lease) and no read, however many calls a round makes.
 */

/** A sandbox that answers at once. */
const sandbox: CodeSandbox = {
  keepsState: false,
  grant: "sandbox:invoke",
  run: async (): Promise<SandboxResult> => sandboxResult({ stdout: "ok" }),
};

/** Leases that note the limit each attempt was taken under. */
class NotedLeases extends MemoryTenantLeases {
  readonly limits: number[] = [];
  override async acquire(...args: Parameters<MemoryTenantLeases["acquire"]>) {
    this.limits.push(args[2]);
    return super.acquire(...args);
  }
}

/** A ReAct turn whose one round calls run_code `calls` times side by side: the reads of runs and tenant settings it made. */
async function turnWith(calls: number, maxSandboxes?: number) {
  const model = new ScriptedModel([
    { text: "Running the code.", calls: Array.from({ length: calls }, (_, i) => ({ name: "run_code", args: { code: `print(${i})` } })) },
    { text: "Done." },
  ]);
  // The catalog hands out whatever this list holds when the turn asks for it: the bound is built over the run's own ports below.
  const tools: Tool[] = [];
  const { ports, runId } = await withRun({ status: "running", ...(maxSandboxes ? { maxSandboxes } : {}) }, { model, tools });
  const leases = new NotedLeases();
  // Wired as the handlers wire it: over every port the step has, with the deployment's limit of 4.
  tools.push(
    runCodeTool(
      sandbox,
      { timeoutMs: 1_000, memoryMb: 128, maxOutputChars: 1_000 },
      new SandboxBound({ ...ports, tenantLeases: leases }, { maxPerTenant: 4, leaseMs: 60_000 }),
    ),
  );
  const reads = { runs: 0, tenantSettings: 0 };
  const [getRun, getSettings] = [ports.runs.get.bind(ports.runs), ports.tenantSettings.get.bind(ports.tenantSettings)];
  ports.runs.get = (...args) => {
    reads.runs++;
    return getRun(...args);
  };
  ports.tenantSettings.get = (...args) => {
    reads.tenantSettings++;
    return getSettings(...args);
  };
  const output = await agentTurn({ runId, mode: "react" }, ports);
  expect(output.done).toBe(true);
  const results = (await ports.events.list(runId)).filter((e) => e.type === "tool.result");
  expect(results.map((e) => (e.data as { ok: boolean }).ok)).toEqual(Array(calls).fill(true));
  return { reads, limits: leases.limits };
}

describe("run_code's reads on the agent's path", () => {
  it("a call reads neither the run nor the tenant's settings: three calls in a round read what one does", async () => {
    const one = await turnWith(1);
    const three = await turnWith(3);
    expect(three.reads).toEqual(one.reads);
    expect(three.reads.tenantSettings).toBe(0);
    expect(three.limits).toEqual([4, 4, 4]);
  });

  it("the tenant's own limit, as its run recorded it, bounds the calls: one lease taken per call under it", async () => {
    const { limits } = await turnWith(2, 2);
    expect(limits).toEqual([2, 2]);
  });

  it("a run accepted at any door records the tenant's maxSandboxes for its calls", async () => {
    const { ports } = await withRun();
    await ports.tenantSettings.put("acme", { maxSandboxes: 2 });
    const links = { api: "http://api.test", stream: "http://stream.test", console: false as const };
    const { run } = await acceptRun(ports, "acme", { input: "Add these up." }, { links });
    expect(run.maxSandboxes).toBe(2);
    const { run: other } = await acceptRun(ports, "globex", { input: "Add these up." }, { links });
    expect(other.maxSandboxes).toBeUndefined();
  });

  it("a plan_solve run's executors find it in the step context the planner wrote (they read no run)", async () => {
    const { ports, runId } = await withRun({ requestedMode: "plan_solve", maxSandboxes: 2 });
    planOutcome(await plan(await startRun({ runId }, ports), ports), "execute");
    expect(await ports.tasks.step(runId, 0)).toMatchObject({ tenantId: "tenant_1", maxSandboxes: 2 });
  });
});
