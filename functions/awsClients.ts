import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { Table } from "../shared/store/table.js";

/** The clients the table, files, queue and executions adapters use. */
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

/**
 * The base clients in `region`, each made when first asked for (a handler that never touches S3
 * makes no S3 client); their endpoints come from the SDK's own variables (AWS_ENDPOINT_URL_S3, …).
 */
export function baseClients(tableName: string, region: string): BaseClients {
  const made: Partial<BaseClients> = {};
  return {
    get table() {
      made.table ??= connectTable(tableName, { region });
      return made.table;
    },
    // Checksums only where S3 requires them: otherwise a presigned upload link carries the CRC32
    // of an empty body, and S3 refuses every byte sent to it.
    get s3() {
      made.s3 ??= new S3Client({ region, requestChecksumCalculation: "WHEN_REQUIRED" });
      return made.s3;
    },
    get sqs() {
      made.sqs ??= new SQSClient({ region });
      return made.sqs;
    },
    get sfn() {
      made.sfn ??= new SFNClient({ region });
      return made.sfn;
    },
  };
}
