import { assertTenantHasBudget, runBudgetOf } from "../budget/runBudget.js";
import { AgentRef, Instructions, parseAgentRef } from "../contracts/agents.js";
import type { CreateRunRequest } from "../contracts/api.js";
import type { RunBudget } from "../contracts/budget.js";
import type { GuardrailCheck } from "../contracts/guardrails.js";
import type { ToolFailures } from "../contracts/interrupts.js";
import type { Multitask, RunAgent } from "../contracts/run.js";
import { BadRequestError } from "../errors.js";
import type { Ports, SettingsOf } from "../ports/index.js";

/** What resolving a run's setup reads: the tenant's settings and its saved agents. */
export type RunSetupPorts = Pick<Ports, "savedAgents" | "tenantSettings" | "spend"> & SettingsOf<"model" | "prices">;

/** A run request as it will be recorded: the saved agent resolved, the operator's instructions joined. */
export interface RunSetup {
  request: CreateRunRequest;
  /** The tenant's choice for a busy session, when the request names none. */
  defaultMultitask?: Multitask;
  /** The tenant's, the saved agent's and the run's instructions, in that order. */
  instructions?: string;
  agent?: RunAgent;
  /** The guardrail checks of the run: the tenant's, then the saved agent's. */
  guardrails?: GuardrailCheck[];
  /** The tenant's choice for tool failures a person can fix (pause or report to the model). */
  toolFailures?: ToolFailures;
  /** The tenant's own bound on its code sandboxes running at once, kept with the run so run_code reads no setting. */
  maxSandboxes?: number;
  /** Its token and cost budgets (the request's or the tenant's, and the tenant's per day and month). */
  budget?: RunBudget;
}

/**
 * The rules every door (REST, MCP, A2A, AG-UI) applies to a new run before it is submitted: the
 * saved agent it names is found (its latest version, or the one named) and its mode and approval
 * policy fill what the request left open; the instructions are checked and joined. Reads only:
 * a refused request has changed nothing.
 */
export async function resolveRunSetup(ports: RunSetupPorts, tenantId: string, request: CreateRunRequest): Promise<RunSetup> {
  const runInstructions = checked(request.instructions);
  const named = request.agent === undefined ? undefined : AgentRef.safeParse(request.agent);
  if (named && !named.success)
    throw new BadRequestError(`agent: ${named.error.issues[0]?.message}`, { agent: request.agent }, "invalid_agent");
  const ref = request.agent ? parseAgentRef(request.agent) : undefined;
  const [tenant, saved] = await Promise.all([
    ports.tenantSettings.get(tenantId),
    ref ? ports.savedAgents.get(tenantId, ref.name, ref.version) : undefined,
  ]);
  if (ref && !saved) {
    const known = ref.version === undefined ? undefined : await ports.savedAgents.get(tenantId, ref.name);
    throw new BadRequestError(
      known
        ? `Saved agent ${ref.name} has no version ${ref.version}; its latest is ${known.version}.`
        : `No saved agent named ${ref.name}.`,
      { agent: request.agent },
      "unknown_agent",
    );
  }
  const instructions = [tenant.instructions, saved?.instructions, runInstructions].filter(Boolean).join("\n\n") || undefined;
  const guardrails = [...(tenant.guardrails ?? []), ...(saved?.guardrails ?? [])];
  const budget = runBudgetOf(ports.settings, request.budget, tenant.budget);
  await assertTenantHasBudget(ports, tenantId, budget);
  return {
    request: saved
      ? {
          ...request,
          // The request's own choices win; a mode left at auto (the default) takes the agent's.
          mode: request.mode === "auto" && saved.mode ? saved.mode : request.mode,
          approval: request.approval ?? saved.approval,
        }
      : request,
    defaultMultitask: request.sessionId && !request.multitask ? tenant.multitask : undefined,
    instructions,
    agent: saved && { name: saved.name, version: saved.version, tools: saved.tools, roles: saved.roles },
    ...(guardrails.length ? { guardrails } : {}),
    ...(tenant.toolFailures ? { toolFailures: tenant.toolFailures } : {}),
    ...(tenant.maxSandboxes ? { maxSandboxes: tenant.maxSandboxes } : {}),
    ...(budget ? { budget } : {}),
  };
}

/** Instructions as every door must take them (a door that parsed them already gets the same answer). */
function checked(instructions: string | undefined): string | undefined {
  if (instructions === undefined) return undefined;
  const parsed = Instructions.safeParse(instructions);
  if (!parsed.success)
    throw new BadRequestError(`instructions: ${parsed.error.issues[0]?.message}`, { field: "instructions" }, "invalid_instructions");
  return parsed.data || undefined;
}
