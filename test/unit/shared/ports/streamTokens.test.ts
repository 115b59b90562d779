import { describe, expect, it } from "vitest";
import type { StreamTokens } from "../../../../shared/ports/streamTokens.js";
import { StreamTokenStore } from "../../../../shared/store/streamTokens.js";
import { MemoryStreamTokens } from "../../../../shared/testing/memoryStreamTokens.js";
import { useDynalite } from "../../../support/dynalite.js";

/** The stream tokens port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): StreamTokens => new MemoryStreamTokens() },
  { name: "DynamoDB adapter on dynalite", make: (): StreamTokens => new StreamTokenStore(dynamo.table()) },
])("stream tokens port: $name", ({ make }) => {
  it("opens the run it was issued for until it expires, then nothing", async () => {
    const tokens = make();
    const { token, expiresAt } = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    expect(await tokens.verify(token)).toEqual({ tenantId: "t1", runId: "run_a" });
    expect(await tokens.verify(token, Date.parse(expiresAt) - 1)).toEqual({ tenantId: "t1", runId: "run_a" });
    expect(await tokens.verify(token, Date.parse(expiresAt))).toBeUndefined();
  });

  it.each(["", "st_short", `st_${"a".repeat(32)}`, "sk_local_0123456789abcdef0123456789abcdef", `st_${"é".repeat(30)}`])(
    "refuses %j",
    async (token) => {
      expect(await make().verify(token)).toBeUndefined();
    },
  );

  it("gives every request its own token", async () => {
    const tokens = make();
    const a = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    const b = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    expect(a.token).not.toBe(b.token);
    expect(await tokens.verify(`${a.token.slice(0, -1)}${a.token.endsWith("A") ? "B" : "A"}`)).toBeUndefined();
  });
});
