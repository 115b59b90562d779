import { randomBytes } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll } from "vitest";
import { connectTable } from "../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../infra/local/dynamo.js";
import type { Table } from "../../shared/store/table.js";

/** What tests sign their requests to a dynalite of their own with (it refuses any other). */
export const TEST_CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test-secret" };

/**
 * dynalite (DynamoDB's wire protocol, in this process) for the tests of one file, stopped after
 * them also when starting failed half-way. `table()` is the stack's table on it.
 */
export function useDynalite(tableName = "stepwise"): { table(): Table } {
  let dynamo: Awaited<ReturnType<typeof startDynamo>> | undefined;
  let table: Table | undefined;
  beforeAll(async () => {
    dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
    const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
    await ensureTable(new DynamoDBClient(config), tableName);
    table = connectTable(tableName, config);
  });
  afterAll(async () => {
    if (table) (await table.client()).destroy();
    await dynamo?.close();
  });
  return {
    table: () => {
      if (!table) throw new Error("dynalite has not started");
      return table;
    },
  };
}

/** A fresh id, so the cases of one file never meet in the shared table. */
export const freshId = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}`;
