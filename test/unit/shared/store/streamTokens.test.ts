import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTable } from "../../../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../../../infra/local/dynamo.js";
import { StreamTokenStore } from "../../../../shared/store/streamTokens.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";

describe("stream tokens (against dynalite)", () => {
  let dynamo: Awaited<ReturnType<typeof startDynamo>>;
  let tokens: StreamTokenStore;
  beforeAll(async () => {
    dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
    const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
    await ensureTable(new DynamoDBClient(config), "tokens");
    tokens = new StreamTokenStore(connectTable("tokens", config));
  });
  afterAll(() => dynamo?.close());

  it("opens the run it was issued for until it expires, then nothing", async () => {
    const { token, expiresAt } = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    expect(await tokens.verify(token)).toEqual({ tenantId: "t1", runId: "run_a" });
    expect(await tokens.verify(token, Date.parse(expiresAt) - 1)).toEqual({ tenantId: "t1", runId: "run_a" });
    expect(await tokens.verify(token, Date.parse(expiresAt))).toBeUndefined();
  });

  it.each(["", "st_short", `st_${"a".repeat(32)}`, "sk_local_0123456789abcdef0123456789abcdef", `st_${"é".repeat(30)}`])(
    "refuses %j",
    async (token) => {
      expect(await tokens.verify(token)).toBeUndefined();
    },
  );

  it("gives every request its own token", async () => {
    const a = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    const b = await tokens.issue({ tenantId: "t1", runId: "run_a" }, 60);
    expect(a.token).not.toBe(b.token);
  });
});
