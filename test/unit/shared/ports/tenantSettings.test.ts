import { describe, expect, it } from "vitest";
import type { TenantDefaults } from "../../../../shared/ports/tenantSettings.js";
import { TenantSettingsStore } from "../../../../shared/store/settings.js";
import { MemoryTenantSettings } from "../../../../shared/testing/memoryTenantSettings.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The tenant settings port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): TenantDefaults => new MemoryTenantSettings() },
  { name: "DynamoDB adapter on dynalite", make: (): TenantDefaults => new TenantSettingsStore(dynamo.table()) },
])("tenant settings port: $name", ({ make }) => {
  it("a tenant that set nothing has no settings; what it puts is what it reads, and only it", async () => {
    const settings = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    expect(await settings.get(tenant)).toEqual({});
    await settings.put(tenant, { multitask: "enqueue", instructions: "Cite sources." });
    expect(await settings.get(tenant)).toEqual({ multitask: "enqueue", instructions: "Cite sources." });
    expect(await settings.get(other)).toEqual({});
  });

  it("a put replaces the settings whole: a field left out is gone", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    await settings.put(tenant, { multitask: "interrupt", instructions: "Be brief." });
    await settings.put(tenant, { multitask: "rollback" });
    expect(await settings.get(tenant)).toEqual({ multitask: "rollback" });
    await settings.put(tenant, {});
    expect(await settings.get(tenant)).toEqual({});
  });

  it("online evals and the tool-failure choice are kept as they were put", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    const onlineEvals = { sampleRate: 0.1, dailyCostCapUsd: 5, judges: [{ name: "grounded", rubric: "Cites sources.", threshold: 0.7 }] };
    await settings.put(tenant, { onlineEvals, toolFailures: "report" });
    expect(await settings.get(tenant)).toEqual({ onlineEvals, toolFailures: "report" });
  });

  it("the tenant's bound on sandboxes running at once is kept as it was put", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    await settings.put(tenant, { maxSandboxes: 2, toolFailures: "report" });
    expect(await settings.get(tenant)).toEqual({ maxSandboxes: 2, toolFailures: "report" });
  });

  it("the tenant's cap on open streams is kept as it was put", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    await settings.put(tenant, { maxOpenStreams: 2, multitask: "enqueue" });
    expect(await settings.get(tenant)).toEqual({ maxOpenStreams: 2, multitask: "enqueue" });
  });

  it("guardrail checks are kept as they were put", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    const guardrails = [
      { kind: "moderation" as const, action: "block" as const, categories: ["violence"] },
      { kind: "regex" as const, name: "codename", action: "redact" as const, pattern: "falcon", flags: "i", on: ["output" as const] },
    ];
    await settings.put(tenant, { guardrails });
    expect(await settings.get(tenant)).toEqual({ guardrails });
  });

  it("budgets are kept as they were put (the tenant's day and month limits are what acceptRun checks)", async () => {
    const settings = make();
    const tenant = freshId("tenant");
    const budget = {
      run: { tokens: 5_000 },
      day: { tokens: 100_000, costUsd: 2 },
      month: { costUsd: 40 },
      onExhausted: "deliver" as const,
    };
    await settings.put(tenant, { multitask: "enqueue", budget });
    expect(await settings.get(tenant)).toEqual({ multitask: "enqueue", budget });
  });
});
