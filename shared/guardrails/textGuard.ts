import type { AgentRole, EventBody } from "../contracts/events.js";
import type { GuardrailCheck } from "../contracts/guardrails.js";
import { StepError, StepErrorCode } from "../errors.js";
import type { Ports } from "../ports/index.js";
import type { Tool } from "../ports/tools.js";
import { checksAt, checkText, type Decision, decisionEvents, GuardrailUnavailableError, type GuardUsage } from "./checks.js";
import { HoldBack } from "./holdBack.js";

/**
 * A check blocked what an agent wrote: "Record failure" ends the run `blocked` with the check and
 * reason. Lambda's error carries only the type and a message, so the message is the one-line
 * reason, starting with the check's name (names are `[A-Za-z0-9_.-]`, so it reads back exactly).
 */
export class GuardrailBlockedError extends StepError {
  constructor(
    readonly check: string,
    readonly reason: string,
  ) {
    super(StepErrorCode.GuardrailBlocked, `${check} blocked the answer: ${reason}`);
  }
}

/** The check and reason of a GuardrailBlocked error's message (any other message: the reason as it is). */
export function blockOf(message: string): { check: string; reason: string } {
  const check = /^([A-Za-z0-9_.-]{1,64}) blocked /.exec(message)?.[1];
  return { check: check ?? "guardrail", reason: message };
}

/** A guardrail stopped the text: blocked, or a block check could not answer (the step must fail, not carry on). */
export const isGuardrailStop = (error: unknown) => error instanceof GuardrailBlockedError || error instanceof GuardrailUnavailableError;

/** Tools that bring outside text into a run (indirect prompt injection): the web, files, MCP servers. */
const OUTSIDE_TEXT = new Set(["web_fetch", "web_search", "deep_search", "read_artifact"]);
export const bringsOutsideText = (tool: Tool | undefined) =>
  tool !== undefined && (tool.source !== undefined || OUTSIDE_TEXT.has(tool.name));

type Source = { agent: AgentRole; taskId?: string };

/**
 * One agent's guardrails on what it writes and reads: the stream's hold-back window, the check of
 * each text it shows (thoughts, answers), and of each tool result that brings outside text in.
 * Every decision is an event; the checks' cost is added to `usage`.
 */
export class TextGuard {
  private readonly output: GuardrailCheck[];
  private readonly toolResults: GuardrailCheck[];

  constructor(
    private readonly ports: Pick<Ports, "events" | "model">,
    private readonly runId: string,
    checks: readonly GuardrailCheck[] | undefined,
    private readonly source: Source,
    private readonly usage: GuardUsage,
  ) {
    this.output = checksAt(checks, "output");
    this.toolResults = checksAt(checks, "tool_results");
  }

  get checksToolResults(): boolean {
    return this.toolResults.length > 0;
  }

  /** The hold-back of one streamed reply, releasing into `release` (undefined without output checks). */
  holdBack(release: (text: string) => void): HoldBack | undefined {
    if (!this.output.length) return undefined;
    return new HoldBack(this.output, release, (decisions) => void this.record(decisions).catch(() => undefined));
  }

  /** A text a person will see, as it may be shown (redacted); a block throws GuardrailBlockedError. */
  async shown(text: string): Promise<string> {
    if (!this.output.length || !text.trim()) return text;
    const checked = await checkText(this.output, "output", text, { model: this.ports.model });
    this.count(checked.usage);
    await this.record(checked.decisions);
    if (checked.blocked) throw new GuardrailBlockedError(checked.blocked.check, checked.blocked.reason ?? "blocked");
    return checked.text;
  }

  /** A tool's result as the model may read it: redacted, or withheld when a check blocks it. */
  async toolResult(tool: Tool | undefined, output: string): Promise<string> {
    if (!this.toolResults.length || !bringsOutsideText(tool) || !output.trim()) return output;
    const checked = await checkText(this.toolResults, "tool_results", output, { model: this.ports.model });
    this.count(checked.usage);
    await this.record(checked.decisions, tool?.name);
    if (!checked.blocked) return checked.text;
    return `[withheld: the guardrail ${checked.blocked.check} blocked this result (${checked.blocked.reason}). Do not rely on it; tell the user it was withheld.]`;
  }

  private count(more: GuardUsage): void {
    this.usage.promptTokens += more.promptTokens;
    this.usage.completionTokens += more.completionTokens;
    this.usage.llmCalls += more.llmCalls;
  }

  private async record(decisions: Decision[], tool?: string): Promise<void> {
    if (!decisions.length) return;
    await this.ports.events.append(this.runId, decisionEvents(decisions, { ...this.source, ...(tool ? { tool } : {}) }) as EventBody[]);
  }
}
