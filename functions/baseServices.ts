import type { BaseServices } from "../shared/baseServices.js";
import { EventedFileStore } from "../shared/run/fileEvents.js";
import { type Settings, settingsFromEnv } from "../shared/settings.js";
import { ActiveRunStore } from "../shared/store/activeRuns.js";
import { ApiKeyStore } from "../shared/store/apiKeys.js";
import { EventLog } from "../shared/store/events.js";
import { IdempotencyStore } from "../shared/store/idempotency.js";
import { InterruptStore } from "../shared/store/interrupts.js";
import { Journal } from "../shared/store/journal.js";
import { ListingStore } from "../shared/store/listings.js";
import { RunSnapshotStore } from "../shared/store/runSnapshots.js";
import { RunStore } from "../shared/store/runs.js";
import { S3FileStore } from "../shared/store/s3Files.js";
import { SavedAgentStore } from "../shared/store/savedAgents.js";
import { SessionStore } from "../shared/store/sessions.js";
import { TenantSettingsStore } from "../shared/store/settings.js";
import { StepFunctionsExecutions } from "../shared/store/stepFunctions.js";
import { StreamTokenStore } from "../shared/store/streamTokens.js";
import { TaskStore } from "../shared/store/tasks.js";
import { WebhookStore } from "../shared/store/webhooks.js";
import { NotifyQueue } from "../shared/webhooks/queue.js";
import { type BaseClients, baseClients } from "./awsClients.js";

/** The base adapters over the given clients; `overrides` replace any of them (tests). */
export function createBaseServices(settings: Settings, clients: BaseClients, overrides: Partial<BaseServices> = {}): BaseServices {
  const table = overrides.table ?? clients.table;
  const days = settings.retentionDays;
  const runs = overrides.runs ?? new RunStore(table, days);
  const events = overrides.events ?? new EventLog(table, days);
  const files = new S3FileStore({
    table,
    s3: clients.s3,
    bucket: settings.files.bucket,
    retentionDays: days,
    tenantOf: async (runId) => (await runs.get(runId))?.tenantId,
    downloadLinkSeconds: settings.files.downloadLinkSeconds,
  });
  return {
    settings,
    table,
    runs,
    snapshots: new RunSnapshotStore(table),
    events,
    journal: new Journal(table, days),
    tasks: new TaskStore(table, days),
    files: new EventedFileStore(files, events, runs),
    transfers: files,
    apiKeys: new ApiKeyStore(table),
    interrupts: new InterruptStore(table, days),
    webhooks: new WebhookStore(table, days),
    sessions: new SessionStore(table, days),
    listings: new ListingStore(table),
    tenantSettings: new TenantSettingsStore(table),
    streamTokens: new StreamTokenStore(table),
    activeRuns: new ActiveRunStore(table),
    notifyQueue: new NotifyQueue(clients.sqs, settings.webhooks.queueUrl, settings.webhooks.deadLetterQueueUrl),
    executions: new StepFunctionsExecutions(clients.sfn, settings.stateMachineArn),
    idempotency: new IdempotencyStore(table),
    savedAgents: new SavedAgentStore(table),
    ...overrides,
  };
}

let base: BaseServices | undefined;

/** Built on first use from the environment, then reused (with its SDK clients) for the life of the Lambda container. */
export function getBaseServices(): BaseServices {
  if (!base) {
    const settings = settingsFromEnv();
    base = createBaseServices(settings, baseClients(settings.tableName, settings.region));
  }
  return base;
}
