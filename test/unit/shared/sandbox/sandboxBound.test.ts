import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import type { SandboxRequest, SandboxResult } from "../../../../shared/contracts/sandbox.js";
import type { CodeSandbox } from "../../../../shared/ports/sandbox.js";
import { SandboxBound } from "../../../../shared/sandbox/sandboxBound.js";
import { MemoryTenantLeases } from "../../../../shared/testing/memoryTenantLeases.js";
import { MemoryTenantSettings } from "../../../../shared/testing/memoryTenantSettings.js";
import { sandboxResult } from "../../../../shared/testing/sandboxResult.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { runCodeTool } from "../../../../shared/tools/runCode.js";

/**
 * run_code under the per-tenant bound on sandboxes running at once: a call over the tenant's limit
 * waits for a slot, then is refused with an error naming the limit; other tenants are not held up;
 * a slot is given back however the call ends.
 */

const result = (stdout: string): SandboxResult => sandboxResult({ stdout });

/** A sandbox whose calls run until the test ends them: what each call was, and how to end it. */
class HeldSandbox implements CodeSandbox {
  readonly keepsState = false;
  readonly grant = "sandbox:invoke" as const;
  readonly calls: { code: string; end: (outcome: SandboxResult | Error) => void }[] = [];
  private readonly waiting: (() => void)[] = [];

  run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult> {
    return new Promise((resolve, reject) => {
      this.calls.push({ code: request.code, end: (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)) });
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      for (const wake of this.waiting.splice(0)) wake();
    });
  }

  /** Resolves once `count` calls have started. */
  async started(count: number): Promise<void> {
    while (this.calls.length < count) await new Promise<void>((wake) => this.waiting.push(wake));
  }
}

/** Leases that count the attempts to take one (a waiting call asks again and again). */
class CountedLeases extends MemoryTenantLeases {
  attempts = 0;
  override async acquire(...args: Parameters<MemoryTenantLeases["acquire"]>) {
    this.attempts++;
    return super.acquire(...args);
  }
}

function setup(options: { maxPerTenant: number; waitMs: number }) {
  const runs: Record<string, Pick<RunRecord, "tenantId">> = {
    run_a1: { tenantId: "acme" },
    run_a2: { tenantId: "acme" },
    run_g: { tenantId: "globex" },
  };
  const tenantSettings = new MemoryTenantSettings();
  const leases = new CountedLeases();
  const sandbox = new HeldSandbox();
  const bound = new SandboxBound(
    { runs: { get: async (runId) => runs[runId] as RunRecord | undefined }, tenantSettings, tenantLeases: leases },
    { maxPerTenant: options.maxPerTenant, leaseMs: 60_000, waitMs: options.waitMs },
  );
  const tools = new ToolRegistry([runCodeTool(sandbox, { timeoutMs: 1_000, memoryMb: 128, maxOutputChars: 1_000 }, bound)]);
  let n = 0;
  const call = (runId: string, code: string, signal?: AbortSignal) => {
    n++;
    return tools.execute(
      { id: `call_${n}`, name: "run_code", arguments: JSON.stringify({ code }) },
      testToolContext({ runId, idempotencyKey: `${runId}:task:0:call_${n}`, signal }),
    );
  };
  return { call, sandbox, leases, tenantSettings };
}

describe("run_code's bound on a tenant's sandboxes running at once", () => {
  it("at the limit, a call waits, then is refused with an error naming the limit; its code never runs; another tenant runs at once", async () => {
    const { call, sandbox, leases } = setup({ maxPerTenant: 1, waitMs: 300 });
    const first = call("run_a1", "print('first')");
    await sandbox.started(1);
    const refused = await call("run_a2", "print('second')");
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(
      /^Error: run_code failed: the code did not run: this tenant may have at most 1 code sandbox running at once \(its maxSandboxes setting\)/,
    );
    const other = call("run_g", "print('globex')");
    await sandbox.started(2);
    expect(sandbox.calls.map((c) => c.code)).toEqual(["print('first')", "print('globex')"]);
    sandbox.calls[0]!.end(result("first"));
    sandbox.calls[1]!.end(result("globex"));
    expect(await first).toMatchObject({ ok: true, output: "stdout:\nfirst" });
    expect(await other).toMatchObject({ ok: true, output: "stdout:\nglobex" });
    expect(await leases.held("sandbox", "acme")).toBe(0);
    expect(await leases.held("sandbox", "globex")).toBe(0);
  });

  it("a waiting call runs as soon as a slot is given back", async () => {
    const { call, sandbox, leases } = setup({ maxPerTenant: 1, waitMs: 60_000 });
    const first = call("run_a1", "print('first')");
    await sandbox.started(1);
    const second = call("run_a2", "print('second')");
    while (leases.attempts < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sandbox.calls).toHaveLength(1);
    sandbox.calls[0]!.end(result("first"));
    await first;
    await sandbox.started(2);
    sandbox.calls[1]!.end(result("second"));
    expect(await second).toMatchObject({ ok: true, output: "stdout:\nsecond" });
  });

  it.each([
    ["the sandbox failed", (end: (o: SandboxResult | Error) => void) => end(new Error("interpreter crashed"))],
    ["the code timed out", (end: (o: SandboxResult | Error) => void) => end({ ...result(""), timedOut: true, error: "stopped at 1 s" })],
  ])("the slot is given back when %s", async (_, ending) => {
    const { call, sandbox, leases } = setup({ maxPerTenant: 1, waitMs: 100 });
    const first = call("run_a1", "while True: pass");
    await sandbox.started(1);
    expect(await leases.held("sandbox", "acme")).toBe(1);
    ending(sandbox.calls[0]!.end);
    await first;
    expect(await leases.held("sandbox", "acme")).toBe(0);
    const next = call("run_a2", "print('next')");
    await sandbox.started(2);
    sandbox.calls[1]!.end(result("next"));
    expect(await next).toMatchObject({ ok: true });
  });

  it("a call that runs past its lease's time keeps its slot: the lease is renewed while it runs", async () => {
    vi.useFakeTimers();
    const { call, sandbox, leases } = setup({ maxPerTenant: 1, waitMs: 100 });
    const first = call("run_a1", "while True: pass");
    await sandbox.started(1);
    await vi.advanceTimersByTimeAsync(60_000 * 3);
    expect(await leases.held("sandbox", "acme")).toBe(1);
    expect(await leases.acquire("sandbox", "acme", 1, "another call", 60_000)).toBeUndefined();
    sandbox.calls[0]!.end(result("done"));
    expect(await first).toMatchObject({ ok: true });
    expect(await leases.held("sandbox", "acme")).toBe(0);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("the slot is given back when the call is aborted (the run was cancelled)", async () => {
    const { call, sandbox, leases } = setup({ maxPerTenant: 1, waitMs: 100 });
    const abort = new AbortController();
    const first = call("run_a1", "while True: pass", abort.signal);
    await sandbox.started(1);
    abort.abort(new Error("the run was cancelled"));
    expect((await first).ok).toBe(false);
    expect(await leases.held("sandbox", "acme")).toBe(0);
  });

  it("the tenant's maxSandboxes lowers the deployment's limit, and cannot raise it", async () => {
    const { call, sandbox, tenantSettings } = setup({ maxPerTenant: 2, waitMs: 100 });
    await tenantSettings.put("acme", { maxSandboxes: 1 });
    const first = call("run_a1", "print(1)");
    await sandbox.started(1);
    expect((await call("run_a2", "print(2)")).output).toContain("at most 1 code sandbox running at once");
    await tenantSettings.put("acme", { maxSandboxes: 5 });
    const second = call("run_a2", "print(2)");
    await sandbox.started(2);
    expect((await call("run_a2", "print(3)")).output).toContain("at most 2 code sandboxes running at once");
    for (const c of sandbox.calls) c.end(result("done"));
    await Promise.all([first, second]);
  });
});
