import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, ResourceNotFoundException, ScanCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { createRequire } from "node:module";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runListingKeys, TABLE_INDEXES } from "../../shared/store/listings.js";

const require = createRequire(import.meta.url);
const dynalite = require("dynalite") as (options: { path?: string; createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;

/** dynalite on loopback: DynamoDB's wire protocol, in memory or kept in a folder. */
export async function startDynamo(options: { path?: string; port?: number } = {}): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** The stack's table, as infra/stack.ts declares it (pk/sk strings). */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const missing = TABLE_INDEXES.some((i) => !Table?.GlobalSecondaryIndexes?.some((g) => g.IndexName === i.indexName));
    if (missing) await addIndexes(client, tableName);
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "S" },
          ...[...new Set(TABLE_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey]))].map((name) => ({ AttributeName: name, AttributeType: "S" as const })),
        ],
        GlobalSecondaryIndexes: TABLE_INDEXES.map((i) => ({
          IndexName: i.indexName,
          KeySchema: [
            { AttributeName: i.partitionKey, KeyType: "HASH" as const },
            { AttributeName: i.sortKey, KeyType: "RANGE" as const },
          ],
          Projection: { ProjectionType: "ALL" as const },
        })),
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  }
}

/**
 * A data folder from before the listing indexes: dynalite cannot add an index to a table, so copy
 * the items out, create the table again with its indexes, and put them back with their index keys.
 */
async function addIndexes(client: DynamoDBClient, tableName: string): Promise<void> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  await ensureTable(client, tableName);
  for (const item of items) {
    const run = item.pk?.S?.startsWith("RUN#") && item.sk?.S === "META" ? item : undefined;
    const keys = run
      ? runListingKeys({ tenantId: run.tenantId?.S ?? "", sessionId: run.sessionId?.S ?? "", createdAt: run.createdAt?.S ?? "", runId: run.runId?.S ?? "" })
      : {};
    const indexKeys: Record<string, AttributeValue> = Object.fromEntries(Object.entries(keys).map(([name, value]) => [name, { S: String(value) }]));
    await client.send(new PutItemCommand({ TableName: tableName, Item: { ...item, ...indexKeys } }));
  }
}
