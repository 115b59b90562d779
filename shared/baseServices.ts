import { S3Client } from "@aws-sdk/client-s3";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Config } from "./config.js";
import type { Ports } from "./ports/index.js";
import { EventedFileStore } from "./run/fileEvents.js";
import { ActiveRunStore } from "./store/activeRuns.js";
import { ApiKeyStore } from "./store/apiKeys.js";
import { EventLog } from "./store/events.js";
import { IdempotencyStore } from "./store/idempotency.js";
import { InterruptStore } from "./store/interrupts.js";
import { Journal } from "./store/journal.js";
import { Listings } from "./store/listings.js";
import { RunSnapshots } from "./store/runSnapshots.js";
import { RunStore } from "./store/runs.js";
import { S3FileStore } from "./store/s3Files.js";
import { SessionStore } from "./store/sessions.js";
import { TenantSettingsStore } from "./store/settings.js";
import { StepFunctionsExecutions } from "./store/stepFunctions.js";
import { StreamTokenStore } from "./store/streamTokens.js";
import { Table } from "./store/table.js";
import { TaskStore } from "./store/tasks.js";
import { WebhookStore } from "./store/webhooks.js";
import { NotifyQueue } from "./webhooks/queue.js";

/**
 * What every handler needs: the run's records in the table, its files, the notification queue and
 * the executions. No model and no tools: a function that runs no agent builds only this, and its
 * bundle carries neither the model client nor the tools' libraries (shared/services.ts adds them).
 */
export interface BaseServices extends Omit<Ports, "model" | "tools"> {
  table: Table;
  /** A run with its tasks, files and interrupts, in one read (`GET /v1/runs/{id}`). */
  snapshots: RunSnapshots;
  apiKeys: ApiKeyStore;
  listings: Listings;
  streamTokens: StreamTokenStore;
  settings: TenantSettingsStore;
}

/** `sfn`: the Step Functions client the executions adapter uses (tests point it elsewhere). */
export function createBaseServices(config: Config, overrides: Partial<BaseServices> & { sfn?: SFNClient } = {}): BaseServices {
  const { sfn, ...replaced } = overrides;
  const table = overrides.table ?? Table.connect(config.TABLE_NAME, { region: config.AWS_REGION });
  const days = config.RETENTION_DAYS;
  const runs = overrides.runs ?? new RunStore(table, days);
  const events = overrides.events ?? new EventLog(table, days);
  const files = new S3FileStore({
    table,
    // Checksums only where S3 requires them: otherwise a presigned upload link carries the CRC32
    // of an empty body, and S3 refuses every byte sent to it.
    s3: new S3Client({ region: config.AWS_REGION, requestChecksumCalculation: "WHEN_REQUIRED" }),
    bucket: config.FILES_BUCKET,
    retentionDays: days,
    tenantOf: async (runId) => (await runs.get(runId))?.tenantId,
    downloadLinkSeconds: config.DOWNLOAD_LINK_SECONDS,
  });
  return {
    config,
    table,
    runs,
    snapshots: new RunSnapshots(table),
    events,
    journal: new Journal(table, days),
    tasks: new TaskStore(table, days),
    files: new EventedFileStore(files, events, runs),
    transfers: files,
    apiKeys: new ApiKeyStore(table),
    interrupts: new InterruptStore(table, days),
    webhooks: new WebhookStore(table, days),
    sessions: new SessionStore(table, days),
    listings: new Listings(table),
    settings: new TenantSettingsStore(table),
    streamTokens: new StreamTokenStore(table),
    activeRuns: new ActiveRunStore(table),
    notifyQueue: new NotifyQueue(new SQSClient({ region: config.AWS_REGION }), config.NOTIFY_QUEUE_URL, config.DEAD_LETTER_QUEUE_URL),
    executions: new StepFunctionsExecutions(sfn ?? new SFNClient({ region: config.AWS_REGION }), config.STATE_MACHINE_ARN),
    idempotency: new IdempotencyStore(table),
    ...replaced,
  };
}
