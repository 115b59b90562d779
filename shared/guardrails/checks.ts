import { setTimeout as delay } from "node:timers/promises";
import type { AgentRole, EventBody } from "../contracts/events.js";
import { checkName, type GuardrailCheck, type GuardrailStage, stagesOf } from "../contracts/guardrails.js";
import { errorMessage, StepError, StepErrorCode } from "../errors.js";
import type { ChatModel } from "../llm/types.js";
import { findInjection, findPattern, findPii, redact, type Span } from "./detectors.js";
import { judge } from "./judge.js";

export type Verdict = "pass" | "block" | "redact" | "warn";

/** What one check decided on one text. Its reason names what was found, never the text itself. */
export interface Decision {
  check: string;
  kind: GuardrailCheck["kind"];
  stage: GuardrailStage;
  verdict: Verdict;
  reason?: string;
  /** The check's service could not answer; its failure mode let the text through. */
  failed?: boolean;
  spans?: Span[];
}

export interface GuardUsage {
  promptTokens: number;
  completionTokens: number;
  llmCalls: number;
}

export interface Checked {
  /** The text with every redaction applied. */
  text: string;
  decisions: Decision[];
  /** The first blocking decision: the text must not go on. */
  blocked?: Decision;
  /** What the checks cost (an LLM judge's tokens). */
  usage: GuardUsage;
}

/** What service-backed checks talk to, and how long a failing one is retried. */
export interface GuardContext {
  model: ChatModel;
  signal?: AbortSignal;
  /** Waits between attempts of a failing service (default: 3 attempts, 0.2 s then 1 s apart). */
  retryDelaysMs?: readonly number[];
}

const DEFAULT_RETRY_DELAYS = [200, 1_000];

/** The checks that run in process (no service): fast enough for every window of streamed text. */
export const isInProcess = (check: GuardrailCheck) => check.kind === "pii" || check.kind === "regex" || check.kind === "prompt_injection";

/** The checks of `stage` among a run's checks. */
export const checksAt = (checks: readonly GuardrailCheck[] | undefined, stage: GuardrailStage) =>
  (checks ?? []).filter((check) => stagesOf(check).includes(stage));

/** A `block` service check could not answer, after its retries: the text cannot go on (it fails closed). */
export class GuardrailUnavailableError extends StepError {
  constructor(check: GuardrailCheck, cause: unknown) {
    super(
      StepErrorCode.ModelUnavailable,
      `The guardrail check ${checkName(check)} (${check.kind}) could not answer: ${errorMessage(cause)}. It fails closed, so the run cannot go on until it answers.`,
      cause,
    );
  }
}

/**
 * Runs `checks` on `text` at `stage`: each decides pass, or its action (block, redact, warn).
 * Redactions of every check are applied together; a block wins over everything.
 */
export async function checkText(
  checks: readonly GuardrailCheck[],
  stage: GuardrailStage,
  text: string,
  context: GuardContext,
): Promise<Checked> {
  const usage: GuardUsage = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
  const decisions = await Promise.all(checks.map((check) => decide(check, stage, text, context, usage)));
  const blocked = decisions.find((d) => d.verdict === "block");
  const spans = decisions.filter((d) => d.verdict === "redact").flatMap((d) => d.spans ?? []);
  return { text: spans.length ? redact(text, spans) : text, decisions, ...(blocked ? { blocked } : {}), usage };
}

/** The in-process checks only, synchronously (a streamed window). */
export function checkInProcess(checks: readonly GuardrailCheck[], stage: GuardrailStage, text: string): Omit<Checked, "usage"> {
  const decisions = checks.filter(isInProcess).map((check) => fromSpans(check, stage, inProcessSpans(check, text)));
  const blocked = decisions.find((d) => d.verdict === "block");
  const spans = decisions.filter((d) => d.verdict === "redact").flatMap((d) => d.spans ?? []);
  return { text: spans.length ? redact(text, spans) : text, decisions, ...(blocked ? { blocked } : {}) };
}

function inProcessSpans(check: GuardrailCheck, text: string): Span[] {
  switch (check.kind) {
    case "pii":
      return findPii(text, check.entities);
    case "regex":
      return findPattern(text, check.pattern, check.flags);
    case "prompt_injection":
      return findInjection(text);
    default:
      return [];
  }
}

function fromSpans(check: GuardrailCheck, stage: GuardrailStage, spans: Span[]): Decision {
  const base = { check: checkName(check), kind: check.kind, stage };
  if (!spans.length) return { ...base, verdict: "pass" };
  const labels = [...new Set(spans.map((s) => s.label))];
  const what = check.kind === "regex" ? `matched its pattern ${spans.length} time(s)` : `found ${spans.length}: ${labels.join(", ")}`;
  return { ...base, verdict: check.action, reason: what, spans };
}

async function decide(
  check: GuardrailCheck,
  stage: GuardrailStage,
  text: string,
  context: GuardContext,
  usage: GuardUsage,
): Promise<Decision> {
  if (isInProcess(check)) return fromSpans(check, stage, inProcessSpans(check, text));
  const base = { check: checkName(check), kind: check.kind, stage };
  try {
    const fired = await withRetries(context, () => askService(check, text, context, usage));
    return fired ? { ...base, verdict: check.action, reason: fired } : { ...base, verdict: "pass" };
  } catch (error) {
    if (context.signal?.aborted) throw error;
    const mode = ("onFailure" in check && check.onFailure) || (check.action === "block" ? "closed" : "open");
    if (mode === "closed") throw new GuardrailUnavailableError(check, error);
    return { ...base, verdict: "warn", failed: true, reason: `could not answer (${errorMessage(error).slice(0, 300)}); it fails open` };
  }
}

/** Asks the check's service: the reason it fires, or undefined when the text passes. */
async function askService(check: GuardrailCheck, text: string, context: GuardContext, usage: GuardUsage): Promise<string | undefined> {
  if (check.kind === "moderation") {
    if (!context.model.moderate) throw new Error(`the model ${context.model.name} has no moderation endpoint`);
    const result = await context.model.moderate(text, { model: check.model, signal: context.signal });
    const hits = check.categories ? result.categories.filter((c) => check.categories?.includes(c)) : result.categories;
    if (!result.flagged || (check.categories && hits.length === 0)) return undefined;
    return `flagged by moderation${hits.length ? `: ${hits.join(", ")}` : ""}`;
  }
  if (check.kind === "llm_judge") {
    try {
      const verdict = await judge(context.model, check.rubric, text, context.signal);
      add(usage, verdict.usage);
      return verdict.pass ? undefined : `the judge found it breaks the rubric${verdict.reason ? `: ${verdict.reason}` : ""}`;
    } catch (error) {
      const paid = (error as { usage?: GuardUsage }).usage;
      if (paid) add(usage, paid);
      throw error;
    }
  }
  return undefined;
}

function add(usage: GuardUsage, more: GuardUsage): void {
  usage.promptTokens += more.promptTokens;
  usage.completionTokens += more.completionTokens;
  usage.llmCalls += more.llmCalls;
}

async function withRetries<T>(context: GuardContext, call: () => Promise<T>): Promise<T> {
  const delays = context.retryDelaysMs ?? DEFAULT_RETRY_DELAYS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= delays.length || context.signal?.aborted) throw error;
      await delay(delays[attempt], undefined, { signal: context.signal }).catch(() => undefined);
    }
  }
}

/** The decisions as `guardrail.decided` events (spans and text left out). */
export function decisionEvents(
  decisions: readonly Decision[],
  source: { agent?: AgentRole; taskId?: string; tool?: string } = {},
): EventBody[] {
  return decisions.map(({ spans: _, ...decision }) => ({ type: "guardrail.decided", data: { ...decision, ...source } }));
}
