import type { AgentRole, EventBody } from "../contracts/events.js";
import type { Usage } from "../contracts/run.js";
import { errorMessage } from "../errors.js";
import type { ToolCall } from "../llm/types.js";
import { type CallDecision, decideCall, type Principal } from "../policy/decide.js";
import { type CompiledPolicies, compilePolicies } from "../policy/policySet.js";
import type { Ports } from "../ports/index.js";
import type { Tool, ToolOutcome, ToolSet } from "../ports/tools.js";
import type { ScopeJournal } from "./scopeJournal.js";
import { parseOrUndefined } from "./toolExecution.js";

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

  /** The run's principal and spend, and the tenant's policies in force: read once per turn, on its first tool call. */
  private async load(): Promise<Loaded | undefined> {
    if (!this.ports.policies) return undefined;
    const run = await this.ports.runs.get(this.runId);
    if (!run) return undefined;
    const policies = await this.ports.policies.list(run.tenantId);
    if (policies.length === 0) return undefined;
    return {
      principal: { tenantId: run.tenantId, agent: run.agent?.name, sessionId: run.sessionId },
      usage: run.usage,
      turn: run.turn ?? 0,
      policies: await compilePolicies(policies),
    };
  }
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
