import type { ChatModel } from "../llm/types.js";
import type { Settings } from "../settings.js";
import type { ActiveRuns } from "./activeRuns.js";
import type { ApiKeys } from "./apiKeys.js";
import type { EvalSpend } from "./evalSpend.js";
import type { RunEvents } from "./events.js";
import type { Executions } from "./executions.js";
import type { FileStore, FileTransfer } from "./files.js";
import type { IdempotencyKeys } from "./idempotency.js";
import type { Interrupts } from "./interrupts.js";
import type { RunJournal } from "./journal.js";
import type { Listings } from "./listings.js";
import type { Notifier } from "./notifier.js";
import type { ToolPolicies } from "./policies.js";
import type { RunSnapshots } from "./runSnapshots.js";
import type { Runs } from "./runs.js";
import type { SavedAgents } from "./savedAgents.js";
import type { Sessions } from "./sessions.js";
import type { SpendLedger } from "./spend.js";
import type { StreamTokens } from "./streamTokens.js";
import type { Tasks } from "./tasks.js";
import type { TenantLeases } from "./tenantLeases.js";
import type { TenantDefaults } from "./tenantSettings.js";
import type { ToolCatalog } from "./toolCatalog.js";
import type { ToolSources } from "./toolSources.js";
import type { TraceExport } from "./traces.js";
import type { Webhooks } from "./webhooks.js";

/**
 * Every port the orchestration core uses. A function of the core takes the few it
 * needs (`Pick<Ports, …>`): functions/ passes its Services (adapters), unit tests the in-memory
 * fakes of shared/testing/.
 */
export interface Ports {
  /** The deployment's settings (budgets, limits); a value, not a port, but the core reads it beside them. */
  settings: Settings;
  runs: Runs;
  events: RunEvents;
  journal: RunJournal;
  tasks: Tasks;
  interrupts: Interrupts;
  files: FileStore;
  /** Uploads before a run, and download links. */
  transfers: FileTransfer;
  tools: ToolCatalog;
  model: ChatModel;
  executions: Executions;
  notifyQueue: Notifier;
  activeRuns: ActiveRuns;
  sessions: Sessions;
  webhooks: Webhooks;
  idempotency: IdempotencyKeys;
  /** The tenants' saved agents (named configurations a run can name). */
  savedAgents: SavedAgents;
  /** A run with its tasks, files and interrupts, in one read (`GET /v1/runs/{id}`). */
  snapshots: RunSnapshots;
  apiKeys: ApiKeys;
  listings: Listings;
  streamTokens: StreamTokens;
  /** What each tenant has at once across containers, leased within a limit: its open streams, its code sandboxes running. */
  tenantLeases: TenantLeases;
  /** Each tenant's own settings (`GET/PUT /v1/settings`), not the deployment's (`settings`). */
  tenantSettings: TenantDefaults;
  /** The tenants' MCP servers (the tool catalog reads them). */
  toolSources: ToolSources;
  /** The tenants' Cedar policies on tool calls (`/v1/policies`). */
  policies: ToolPolicies;
  /** What judging each tenant's runs cost per day (online evals). */
  evalSpend: EvalSpend;
  /** What runs and tenants have spent and reserved against their token and cost budgets. */
  spend: SpendLedger;
  /** Where an ended run's GenAI spans are sent (X-Ray on AWS). */
  traces: TraceExport;
}

/** The settings a piece of the core reads: only the groups named. */
export type SettingsOf<K extends keyof Settings> = { settings: Pick<Settings, K> };

/** The ports a step uses, and when its Lambda's time runs out. */
export type StepPorts<K extends keyof Ports> = Pick<Ports, K> & {
  /** Epoch ms after which an agent hands back to the state machine rather than start a round. */
  deadline?: number;
};
