import { Worker } from "node:worker_threads";
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  ResourceNotFoundException,
  ScanCommand,
} from "@aws-sdk/client-dynamodb";
import { keys } from "../../shared/store/keys.js";
import { TABLE_INDEXES } from "../../shared/store/listings.js";
import type { LocalCredentials } from "./sigv4.mjs";

/**
 * dynalite on loopback: DynamoDB's wire protocol, in memory or kept in a folder, for requests signed
 * with these credentials. It runs in a worker thread, so its CPU work runs in parallel with the
 * handlers' (see dynaliteWorker.mjs).
 */
export async function startDynamo(options: {
  credentials: LocalCredentials;
  path?: string;
  port?: number;
}): Promise<{ endpoint: string; close(): Promise<void> }> {
  const worker = new Worker(new URL("./dynaliteWorker.mjs", import.meta.url), {
    workerData: { path: options.path, port: options.port, credentials: options.credentials },
    // Plain JavaScript: none of the parent's loaders (tsx) or preloads.
    execArgv: [],
  });
  const port = await new Promise<number>((resolve, reject) => {
    // What dynaliteWorker.mjs posts.
    worker.on("message", (message: { type: "listening"; port: number } | { type: "error"; message: string } | { type: "closed" }) => {
      if (message.type === "listening") resolve(message.port);
      if (message.type === "error") reject(new Error(`dynalite did not start: ${message.message}`));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`dynalite's thread exited (${code}) before it listened`)));
  }).catch(async (error) => {
    await worker.terminate();
    throw error;
  });
  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        // A folder's store is closed cleanly before the thread goes; terminate if it does not answer.
        const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 5_000);
        worker.on("message", (message: { type: string }) => {
          if (message.type !== "closed") return;
          clearTimeout(timer);
          void worker.terminate().then(() => resolve());
        });
        worker.postMessage("close");
      })),
  };
}

/** The stack's table, as infra/aws/stack.ts declares it (pk/sk strings). */
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
          ...[...new Set(TABLE_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey]))].map((name) => ({
            AttributeName: name,
            AttributeType: "S" as const,
          })),
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
    await untilActive(client, tableName);
  }
}

/** A created table takes requests once it is ACTIVE (as on AWS; dynalite gets there a moment later, from another thread). */
async function untilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === "ACTIVE") return;
    if (attempt >= 500) throw new Error(`table ${tableName} is still ${Table?.TableStatus} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
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
    const run = item.pk?.S?.startsWith(keys.runPkPrefix) && item.sk?.S === keys.metaSk ? item : undefined;
    const listing = run
      ? keys.runListing({ tenantId: run.tenantId?.S ?? "", createdAt: run.createdAt?.S ?? "", runId: run.runId?.S ?? "" })
      : {};
    const indexKeys: Record<string, AttributeValue> = Object.fromEntries(
      Object.entries(listing).map(([name, value]) => [name, { S: String(value) }]),
    );
    await client.send(new PutItemCommand({ TableName: tableName, Item: { ...item, ...indexKeys } }));
  }
}
