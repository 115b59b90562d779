import type { HandlerPorts, PortName, PortsOf } from "../shared/handlerPorts.js";
import { onFirstCall } from "../shared/lazyImport.js";
import type { Executions } from "../shared/ports/executions.js";
import type { FileStore, FileTransfer } from "../shared/ports/files.js";
import type { TraceExport } from "../shared/ports/traces.js";
import { EventedFileStore } from "../shared/run/fileEvents.js";
import { type Settings, settingsFromEnv } from "../shared/settings.js";
import { ActiveRunStore } from "../shared/store/activeRuns.js";
import { ApiKeyStore } from "../shared/store/apiKeys.js";
import { EvalSpendStore } from "../shared/store/evalSpend.js";
import { EventLog } from "../shared/store/events.js";
import { executionArn } from "../shared/store/executionArns.js";
import { IdempotencyStore } from "../shared/store/idempotency.js";
import { InterruptStore } from "../shared/store/interrupts.js";
import { Journal } from "../shared/store/journal.js";
import { ListingStore } from "../shared/store/listings.js";
import { PolicyStore } from "../shared/store/policies.js";
import { RunSnapshotStore } from "../shared/store/runSnapshots.js";
import { RunStore } from "../shared/store/runs.js";
import { SavedAgentStore } from "../shared/store/savedAgents.js";
import { SessionStore } from "../shared/store/sessions.js";
import { TenantSettingsStore } from "../shared/store/settings.js";
import { SpendStore } from "../shared/store/spend.js";
import { StreamTokenStore } from "../shared/store/streamTokens.js";
import type { Table } from "../shared/store/table.js";
import { TaskStore } from "../shared/store/tasks.js";
import { TenantLeaseStore } from "../shared/store/tenantLeases.js";
import { ToolSourceStore } from "../shared/store/toolSources.js";
import { WebhookStore } from "../shared/store/webhooks.js";
import { type BaseClients, baseClients } from "./awsClients.js";

/** What a port is built from: the settings, the AWS clients, and the other ports (each built on first use too). */
export interface WiringParts {
  readonly settings: Settings;
  readonly clients: BaseClients;
  port<K extends PortName>(name: K): HandlerPorts[K];
}

export type PortBuilder<K extends PortName> = (parts: WiringParts) => HandlerPorts[K];

/**
 * The ports whose adapters are heavy to load (the model's client, the MCP client and work tools,
 * KMS): a handler that uses one passes its builder (functions/modelPort.ts, functions/toolPorts.ts),
 * so the bundles of the others never hold their code.
 */
export type HeavyPort = "model" | "tools" | "secrets";
/** The builders of the heavy ports among `K`: a handler that names one must pass its builder. */
export type HeavyBuilders<K extends PortName> = { [H in K & HeavyPort]: PortBuilder<H> };
type LightPort = Exclude<PortName, HeavyPort>;

/** A store on the table: every one takes the table, and those whose records expire the retention. */
const onTable =
  <T>(Store: new (table: Table, retentionDays: number) => T) =>
  ({ clients, settings }: WiringParts): T =>
    new Store(clients.table, settings.retentionDays);

/**
 * The run's files: their bytes in the bucket, their records in the table, each run's tenant read
 * from its record. The adapter and the S3 client load on the first call (the SDK's S3 is large).
 */
function s3Files({ clients, settings, port }: WiringParts): FileStore & FileTransfer {
  const methods = { put: true, get: true, getRange: true, list: true } as const;
  const transfers = {
    upload: true,
    beginUpload: true,
    signParts: true,
    completeUpload: true,
    uploads: true,
    attach: true,
    downloadUrl: true,
  } as const;
  return onFirstCall({ ...methods, ...transfers }, async () => {
    const adapter = await import("../shared/store/s3Files.js");
    return new adapter.S3FileStore({
      table: clients.table,
      s3: await clients.s3(),
      bucket: settings.files.bucket,
      retentionDays: settings.retentionDays,
      tenantOf: async (runId) => (await port("runs").get(runId))?.tenantId,
      downloadLinkSeconds: settings.files.downloadLinkSeconds,
    });
  });
}

/** The runs' executions: an execution's ARN is known at once, the Step Functions client loads on the first call. */
function stepFunctions({ clients, settings }: WiringParts): Executions {
  const calls = {
    start: true,
    stop: true,
    describe: true,
    redrive: true,
    sendTaskSuccess: true,
    startContinuation: true,
    historyLength: true,
    stateTransitions: true,
  } as const;
  const later = onFirstCall<Omit<Executions, "arnFor">>(calls, async () => {
    const adapter = await import("../shared/store/stepFunctions.js");
    return new adapter.StepFunctionsExecutions(await clients.sfn(), settings.stateMachineArn);
  });
  return { ...later, arnFor: (runId) => executionArn(settings.stateMachineArn, runId) };
}

const LIGHT: { [K in LightPort]: PortBuilder<K> } = {
  table: ({ clients }) => clients.table,
  runs: onTable(RunStore),
  events: onTable(EventLog),
  journal: onTable(Journal),
  tasks: onTable(TaskStore),
  interrupts: onTable(InterruptStore),
  webhooks: onTable(WebhookStore),
  sessions: onTable(SessionStore),
  snapshots: onTable(RunSnapshotStore),
  apiKeys: onTable(ApiKeyStore),
  listings: onTable(ListingStore),
  tenantSettings: onTable(TenantSettingsStore),
  streamTokens: onTable(StreamTokenStore),
  activeRuns: onTable(ActiveRunStore),
  tenantLeases: ({ clients }) => new TenantLeaseStore(clients.table),
  spend: onTable(SpendStore),
  idempotency: onTable(IdempotencyStore),
  savedAgents: onTable(SavedAgentStore),
  toolSources: onTable(ToolSourceStore),
  policies: onTable(PolicyStore),
  evalSpend: onTable(EvalSpendStore),
  transfers: s3Files,
  // The files written by agents and tools announce themselves in the run's events.
  files: (parts) => new EventedFileStore(s3Files(parts), parts.port("events"), parts.port("runs")),
  // The adapters below load their SDK (SQS, Step Functions, X-Ray) on the first call.
  notifyQueue: ({ clients, settings }) =>
    onFirstCall({ send: true, deadLetter: true }, async () => {
      const adapter = await import("../shared/webhooks/queue.js");
      return new adapter.NotifyQueue(await clients.sqs(), settings.webhooks.queueUrl, settings.webhooks.deadLetterQueueUrl);
    }),
  executions: stepFunctions,
  // X-Ray's daemon, where one is named (Lambda with active tracing names its own); else nowhere.
  traces: ({ settings }) => {
    const daemon = settings.traces?.xrayDaemonAddress;
    if (!daemon) return { active: false, send: async () => {} };
    const later = onFirstCall<Pick<TraceExport, "send">>(
      { send: true },
      async () => new (await import("../shared/tracing/xrayTraces.js")).XRayTraces(daemon),
    );
    return { active: true, ...later };
  },
};

export interface WiringOptions {
  /** The environment the settings are read from (default: the process's, on first use). */
  env?: Record<string, string | undefined>;
  /** Settings to use as they are (tests). */
  settings?: Settings;
  clients?: BaseClients;
  /** Ports given ready-made (tests: fakes, or an adapter over a test's client). */
  ports?: Partial<HandlerPorts>;
}

/**
 * A handler's ports: those `uses` names, each built when first read and then kept (with its SDK
 * client) for the life of the Lambda container. Nothing is built, and no setting read, before a
 * request needs it: `/health` reads the table and builds nothing else.
 */
export function wire<const K extends PortName>(
  uses: { readonly ports: readonly K[] },
  heavy: HeavyBuilders<K>,
  options: WiringOptions = {},
): PortsOf<K> {
  const built: Partial<HandlerPorts> = { ...options.ports };
  let settings = options.settings;
  let clients = options.clients;
  const builders = { ...LIGHT, ...heavy } as { [P in PortName]?: PortBuilder<P> };
  const parts: WiringParts = {
    get settings() {
      settings ??= settingsFromEnv(options.env);
      return settings;
    },
    get clients() {
      clients ??= baseClients(parts.settings.tableName, parts.settings.region);
      return clients;
    },
    port<P extends PortName>(name: P): HandlerPorts[P] {
      if (built[name] === undefined) {
        const build = builders[name] as PortBuilder<P> | undefined;
        if (!build) throw new Error(`The ${name} port is heavy: the handler's wiring passes its builder.`);
        built[name] = build(parts);
      }
      return built[name] as HandlerPorts[P];
    },
  };
  const ports = {} as PortsOf<K>;
  Object.defineProperty(ports, "settings", { enumerable: true, get: () => parts.settings });
  for (const name of uses.ports) Object.defineProperty(ports, name, { enumerable: true, get: () => parts.port(name) });
  return ports;
}
