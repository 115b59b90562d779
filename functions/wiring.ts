import type { HandlerPorts, PortName, PortsOf } from "../shared/handlerPorts.js";
import { EventedFileStore } from "../shared/run/fileEvents.js";
import { type Settings, settingsFromEnv } from "../shared/settings.js";
import { ActiveRunStore } from "../shared/store/activeRuns.js";
import { ApiKeyStore } from "../shared/store/apiKeys.js";
import { EvalSpendStore } from "../shared/store/evalSpend.js";
import { EventLog } from "../shared/store/events.js";
import { IdempotencyStore } from "../shared/store/idempotency.js";
import { InterruptStore } from "../shared/store/interrupts.js";
import { Journal } from "../shared/store/journal.js";
import { ListingStore } from "../shared/store/listings.js";
import { PolicyStore } from "../shared/store/policies.js";
import { RunSnapshotStore } from "../shared/store/runSnapshots.js";
import { RunStore } from "../shared/store/runs.js";
import { S3FileStore } from "../shared/store/s3Files.js";
import { SavedAgentStore } from "../shared/store/savedAgents.js";
import { SessionStore } from "../shared/store/sessions.js";
import { TenantSettingsStore } from "../shared/store/settings.js";
import { SpendStore } from "../shared/store/spend.js";
import { StepFunctionsExecutions } from "../shared/store/stepFunctions.js";
import { StreamTokenStore } from "../shared/store/streamTokens.js";
import type { Table } from "../shared/store/table.js";
import { TaskStore } from "../shared/store/tasks.js";
import { TenantLeaseStore } from "../shared/store/tenantLeases.js";
import { ToolSourceStore } from "../shared/store/toolSources.js";
import { WebhookStore } from "../shared/store/webhooks.js";
import { XRayTraces } from "../shared/tracing/xrayTraces.js";
import { NotifyQueue } from "../shared/webhooks/queue.js";
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

/** The run's files: their bytes in the bucket, their records in the table, each run's tenant read from its record. */
function s3Files({ clients, settings, port }: WiringParts): S3FileStore {
  return new S3FileStore({
    table: clients.table,
    s3: clients.s3,
    bucket: settings.files.bucket,
    retentionDays: settings.retentionDays,
    tenantOf: async (runId) => (await port("runs").get(runId))?.tenantId,
    downloadLinkSeconds: settings.files.downloadLinkSeconds,
  });
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
  notifyQueue: ({ clients, settings }) => new NotifyQueue(clients.sqs, settings.webhooks.queueUrl, settings.webhooks.deadLetterQueueUrl),
  executions: ({ clients, settings }) => new StepFunctionsExecutions(clients.sfn, settings.stateMachineArn),
  // X-Ray's daemon, where one is named (Lambda with active tracing names its own); else nowhere.
  traces: ({ settings }) => (settings.traces ? new XRayTraces(settings.traces.xrayDaemonAddress) : { active: false, send: async () => {} }),
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
