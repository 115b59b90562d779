import type { DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SFNClient } from "@aws-sdk/client-sfn";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { loadOnce } from "../shared/lazyImport.js";
import { Table } from "../shared/store/table.js";

/**
 * The clients the table, files, queue and executions adapters use, each loaded (`import()`) and made
 * on first use: their SDKs are not read at a cold start, and a handler that never touches S3 loads
 * no S3 client. The table is at hand; its DynamoDB client loads on its first request.
 */
export interface BaseClients {
  table: Table;
  s3(): Promise<S3Client>;
  sqs(): Promise<SQSClient>;
  sfn(): Promise<SFNClient>;
}

/**
 * The table through a document client that leaves undefined fields out and stores class instances
 * as maps (the stores rely on both), loaded and made on the table's first request.
 */
export function connectTable(name: string, clientConfig: DynamoDBClientConfig = {}): Table {
  return new Table(async () => {
    const [{ DynamoDBClient }, { DynamoDBDocumentClient }] = await Promise.all([
      import("@aws-sdk/client-dynamodb"),
      import("@aws-sdk/lib-dynamodb"),
    ]);
    return DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig), {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
    });
  }, name);
}

/**
 * The base clients in `region`, each made when first asked for; their endpoints come from the
 * SDK's own variables (AWS_ENDPOINT_URL_S3, …).
 */
export function baseClients(tableName: string, region: string): BaseClients {
  let table: Table | undefined;
  return {
    get table() {
      table ??= connectTable(tableName, { region });
      return table;
    },
    // Checksums only where S3 requires them: otherwise a presigned upload link carries the CRC32
    // of an empty body, and S3 refuses every byte sent to it.
    s3: loadOnce(async () => new (await import("@aws-sdk/client-s3")).S3Client({ region, requestChecksumCalculation: "WHEN_REQUIRED" })),
    sqs: loadOnce(async () => new (await import("@aws-sdk/client-sqs")).SQSClient({ region })),
    sfn: loadOnce(async () => new (await import("@aws-sdk/client-sfn")).SFNClient({ region })),
  };
}
