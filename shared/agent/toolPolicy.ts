import type { AgentRole, EventBody } from "../contracts/events.js";
import type { Usage } from "../contracts/run.js";
import { errorMessage } from "../errors.js";
import { parseOrUndefined, type ToolCall } from "../llm/types.js";
import { type CallDecision, decideCall, type Principal } from "../policy/decide.js";
import { type CompiledPolicies, compilePolicies } from "../policy/policySet.js";
import type { Ports } from "../ports/index.js";
import type { ToolPolicies } from "../ports/policies.js";
import type { Tool, ToolOutcome, ToolSet } from "../ports/tools.js";
import type { ScopeJournal } from "./scopeJournal.js";

/**
 * The tenant's tool policies at the tool boundary (shared/policy/ evaluates them): every call of
 * every agent, built-in or MCP, is decided before it runs. A denied call is answered with the
 * policy's reason (the model adapts, as after a person's rejection); a call a policy wants
 * approved waits for a person like any tool approval; a `log_only` policy only says, in a
 * `guardrail.decided` event, what it would have done.
 */
export class ToolPolicyGate {
  private loaded?: Promise<Loaded | undefined>;

  constructor(
    private readonly ports: Pick<Ports, "runs"> & Partial<Pick<Ports, "policies">>,
    private readonly runId: string,
    /** This loop's own spend, counted since the run's record was read. */
    private readonly spent: Pick<Usage, "promptTokens" | "completionTokens" | "llmCalls" | "toolCalls">,
    private readonly options: {
      /** The run's tenant, when the caller read it: a tenant without policies then costs no read at all. */
      tenantId?: string;
      /** How long this container reuses a tenant's policies (TOOL_CATALOG_CACHE_MS); 0 or unset: read every turn. */
      cacheMs?: number;
    } = {},
  ) {}

  /**
   * The decision on one call, made once (journaled: a replay, or the turn that resumes after a
   * person's decision, reads it back); its first making tells watchers each policy's finding.
   */
  async decide(
    call: ToolCall,
    tool: Tool,
    tools: ToolSet,
    at: { journal: ScopeJournal; round: number; emit: (events: EventBody[]) => void; source: { agent: AgentRole; taskId?: string } },
  ): Promise<CallDecision> {
    const made = await at.journal.once(at.round, "memo", `policy:${call.id}`, () => this.evaluate(call, tool, tools), { defer: true });
    if (!made.replayed && made.value.findings.length) {
      at.emit(
        made.value.findings.map((finding) => ({
          type: "guardrail.decided",
          data: {
            ...at.source,
            check: finding.policy,
            kind: "policy",
            stage: "tool_call",
            version: finding.version,
            verdict: finding.verdict,
            reason: finding.reason,
            mode: finding.mode,
            tool: call.name,
            callId: call.id,
          },
        })),
      );
    }
    return made.value;
  }

  private async evaluate(call: ToolCall, tool: Tool, tools: ToolSet): Promise<CallDecision> {
    this.loaded ??= this.load();
    const loaded = await this.loaded.catch((error: unknown) => ({ error: errorMessage(error) }));
    if (!loaded) return { verdict: "allow", findings: [] };
    // Fails closed: policies that cannot be read allow nothing.
    if ("error" in loaded) return { verdict: "deny", reason: `The tool policies could not be read: ${loaded.error}`, findings: [] };
    const spend = {
      promptTokens: loaded.usage.promptTokens + this.spent.promptTokens,
      completionTokens: loaded.usage.completionTokens + this.spent.completionTokens,
      llmCalls: loaded.usage.llmCalls + this.spent.llmCalls,
      toolCalls: loaded.usage.toolCalls + this.spent.toolCalls,
    };
    return decideCall(
      loaded.policies,
      loaded.principal,
      { tool, arguments: parseOrUndefined(call.arguments), spend, turn: loaded.turn },
      tools,
    );
  }

  /**
   * The tenant's policies in force (kept per container, see policiesInForce), then, only when it has
   * some, the run's principal and spend: read once per turn, on its first tool call.
   */
  private async load(): Promise<Loaded | undefined> {
    if (!this.ports.policies) return undefined;
    const read = this.options.tenantId ? undefined : await this.ports.runs.get(this.runId);
    const tenantId = this.options.tenantId ?? read?.tenantId;
    if (!tenantId) return undefined;
    const policies = await policiesInForce(this.ports.policies, tenantId, this.options.cacheMs ?? 0);
    if (!policies) return undefined;
    const run = read ?? (await this.ports.runs.get(this.runId));
    if (!run) return undefined;
    return {
      principal: { tenantId: run.tenantId, agent: run.agent?.name, sessionId: run.sessionId },
      usage: run.usage,
      turn: run.turn ?? 0,
      policies,
    };
  }
}

/** Each policy store's tenants' compiled policies in force (none: undefined), and until when they may be reused. */
const inForce = new WeakMap<ToolPolicies, Map<string, { until: number; policies: Promise<CompiledPolicies | undefined> }>>();

/**
 * A tenant's policies in force, compiled, reused by this container for `cacheMs` (as the tool
 * catalogue is): an agent turn of a tenant without policies reads nothing, and a policy saved or
 * deleted takes effect within `cacheMs` in every container.
 */
function policiesInForce(store: ToolPolicies, tenantId: string, cacheMs: number): Promise<CompiledPolicies | undefined> {
  const tenants = inForce.get(store) ?? new Map();
  inForce.set(store, tenants);
  const cached = tenants.get(tenantId);
  if (cached && cached.until > Date.now()) return cached.policies;
  const policies = store.list(tenantId).then((list) => (list.length ? compilePolicies(list) : undefined));
  if (cacheMs > 0) {
    const entry = { until: Date.now() + cacheMs, policies };
    tenants.set(tenantId, entry);
    policies.catch(() => tenants.get(tenantId) === entry && tenants.delete(tenantId));
  }
  return policies;
}

interface Loaded {
  principal: Principal;
  usage: Usage;
  turn: number;
  policies: CompiledPolicies;
}

/** A denied call's answer: the policy's reason is the fact; the instruction after it is for the model only. */
export function deniedByPolicy(reason: string): ToolOutcome {
  const shown = `Denied by policy: ${reason}`;
  return { ok: false, shown, output: `${shown}\n${MODEL_INSTRUCTION_ON_DENY}` };
}

/** Said to the model after a denial; never shown to clients. */
const MODEL_INSTRUCTION_ON_DENY =
  "(Instruction: this call was not made. Do not repeat it unchanged; change it so that the policy allows it, or continue without it.)";
