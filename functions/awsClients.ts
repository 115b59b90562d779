import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { Table } from "../shared/store/table.js";

/** The clients every handler's adapters use (the table, files, the notification queue, the executions). */
export interface BaseClients {
  table: Table;
  s3: S3Client;
  sqs: SQSClient;
  sfn: SFNClient;
}

/** The table through a document client that leaves undefined fields out and stores class instances as maps (the stores rely on both). */
export function connectTable(name: string, clientConfig: DynamoDBClientConfig = {}): Table {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
  return new Table(doc, name);
}

/** The base clients in `region`; their endpoints come from the SDK's own variables (AWS_ENDPOINT_URL_S3, …). */
export function baseClients(tableName: string, region: string): BaseClients {
  return {
    table: connectTable(tableName, { region }),
    // Checksums only where S3 requires them: otherwise a presigned upload link carries the CRC32
    // of an empty body, and S3 refuses every byte sent to it.
    s3: new S3Client({ region, requestChecksumCalculation: "WHEN_REQUIRED" }),
    sqs: new SQSClient({ region }),
    sfn: new SFNClient({ region }),
  };
}
