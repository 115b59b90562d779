import type { Ports } from "../ports/index.js";
import type { SecretCipher } from "../ports/secretCipher.js";
import type { ToolCatalog } from "../ports/toolCatalog.js";
import type { Tool } from "../ports/tools.js";
import { EventedFileStore } from "../run/fileEvents.js";
import { askUser } from "../tools/askUser.js";
import { builtinTools } from "../tools/builtins.js";
import { ToolRegistry } from "../tools/registry.js";
import { writeReport } from "../tools/writeReport.js";
import { MemoryActiveRuns } from "./memoryActiveRuns.js";
import { MemoryApiKeys } from "./memoryApiKeys.js";
import { MemoryEvalSpend } from "./memoryEvalSpend.js";
import { MemoryEvents } from "./memoryEvents.js";
import { MemoryExecutions } from "./memoryExecutions.js";
import { MemoryFileStore } from "./memoryFiles.js";
import { MemoryIdempotency } from "./memoryIdempotency.js";
import { MemoryInterrupts } from "./memoryInterrupts.js";
import { MemoryJournal } from "./memoryJournal.js";
import { MemoryListings } from "./memoryListings.js";
import { MemoryNotifier } from "./memoryNotifier.js";
import { MemoryPolicies } from "./memoryPolicies.js";
import { MemoryRunSnapshots } from "./memoryRunSnapshots.js";
import { MemoryRuns } from "./memoryRuns.js";
import { MemorySavedAgents } from "./memorySavedAgents.js";
import { MemorySecrets } from "./memorySecrets.js";
import { MemorySessions } from "./memorySessions.js";
import { MemorySpend } from "./memorySpend.js";
import { MemoryStreamTokens } from "./memoryStreamTokens.js";
import { MemoryTasks } from "./memoryTasks.js";
import { MemoryTenantLeases } from "./memoryTenantLeases.js";
import { MemoryTenantSettings } from "./memoryTenantSettings.js";
import { MemoryToolSources } from "./memoryToolSources.js";
import { MemoryTraces } from "./memoryTraces.js";
import { MemoryWebhooks } from "./memoryWebhooks.js";
import { ScriptedModel } from "./scriptedModel.js";
import { type SettingsOverrides, testSettings } from "./settings.js";

/** A catalog of fixed tools, and ask_user (every agent may ask the user). */
function fixedCatalog(tools: readonly Tool[]): ToolCatalog {
  return {
    async registryFor() {
      return new ToolRegistry([...tools, askUser]);
    },
  };
}

/** Every port in memory, wired as functions/services.ts wires the adapters, with the fakes' own handles for assertions. */
export function memoryPorts(options: { settings?: SettingsOverrides; model?: Ports["model"]; tools?: readonly Tool[] } = {}) {
  const settings = testSettings(options.settings);
  const runs = new MemoryRuns();
  const events = new MemoryEvents();
  const tasks = new MemoryTasks(runs);
  const files = new MemoryFileStore();
  const interrupts = new MemoryInterrupts();
  const fakes = {
    runs,
    events,
    tasks,
    journal: new MemoryJournal(tasks),
    interrupts,
    files,
    executions: new MemoryExecutions(settings.stateMachineArn),
    notifyQueue: new MemoryNotifier(),
    activeRuns: new MemoryActiveRuns(),
    tenantLeases: new MemoryTenantLeases(),
    sessions: new MemorySessions(),
    webhooks: new MemoryWebhooks(),
    idempotency: new MemoryIdempotency(),
    savedAgents: new MemorySavedAgents(),
    snapshots: new MemoryRunSnapshots({ runs, tasks, files, interrupts }),
    apiKeys: new MemoryApiKeys(),
    listings: new MemoryListings(runs),
    streamTokens: new MemoryStreamTokens(),
    tenantSettings: new MemoryTenantSettings(),
    toolSources: new MemoryToolSources(),
    policies: new MemoryPolicies(),
    evalSpend: new MemoryEvalSpend(),
    spend: new MemorySpend(),
    secrets: new MemorySecrets(),
    traces: new MemoryTraces(),
  };
  // The secrets' cipher too (a handler port, not the core's), for what seals an A2A push token.
  const ports: Ports & { secrets: SecretCipher } = {
    ...fakes,
    settings,
    files: new EventedFileStore(files, events, runs),
    transfers: files,
    tools: fixedCatalog(options.tools ?? [...builtinTools, writeReport]),
    model: options.model ?? new ScriptedModel([]),
  };
  return { ports, fakes };
}
