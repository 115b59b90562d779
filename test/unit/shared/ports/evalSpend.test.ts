import { describe, expect, it } from "vitest";
import type { EvalSpend } from "../../../../shared/ports/evalSpend.js";
import { EvalSpendStore } from "../../../../shared/store/evalSpend.js";
import { MemoryEvalSpend } from "../../../../shared/testing/memoryEvalSpend.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The eval spend port's contract (online evals' daily cost cap): fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): EvalSpend => new MemoryEvalSpend() },
  { name: "DynamoDB adapter on dynalite", make: (): EvalSpend => new EvalSpendStore(dynamo.table(), 30) },
])("eval spend port: $name", ({ make }) => {
  it("judges adding at once all count; each tenant and each day has its own total", async () => {
    const spend = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    expect(await spend.spent(tenant, "2026-11-28")).toBe(0);
    await Promise.all(Array.from({ length: 8 }, () => spend.add(tenant, "2026-11-28", 0.125)));
    await spend.add(tenant, "2026-11-29", 0.5);
    expect(await spend.spent(tenant, "2026-11-28")).toBe(1);
    expect(await spend.spent(tenant, "2026-11-29")).toBe(0.5);
    expect(await spend.spent(other, "2026-11-28")).toBe(0);
  });
});
