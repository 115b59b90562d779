import type { RunBudget } from "../contracts/budget.js";
import type { AgentRole, EventBody } from "../contracts/events.js";
import type { GuardrailCheck } from "../contracts/guardrails.js";
import type { ImageLimits } from "../contracts/imageLimits.js";
import type { ApprovalPolicy, ToolFailures } from "../contracts/interrupts.js";
import type { RunRecord, Usage } from "../contracts/run.js";
import { StepError, StepErrorCode } from "../errors.js";
import { TextGuard } from "../guardrails/textGuard.js";
import { contextOverflowOf, windowOf } from "../llm/providerRules.js";
import { DEFAULT_TOOL_CAP, settingsFor } from "../llm/roleSettings.js";
import {
  type ChatMessage,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  moderationOf,
  paidAttemptsOf,
  type ToolCall,
  type ToolSpec,
} from "../llm/types.js";
import type { RereadHint } from "../memory/compaction.js";
import { ContextWindow } from "../memory/context.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import type { ToolOutcome, ToolSet } from "../ports/tools.js";
import type { Settings } from "../settings.js";
import { personaOf, withoutPersona } from "../tools/persona.js";
import { withToolSearch } from "../tools/toolSearch.js";
import { BackgroundEvents } from "./backgroundWrites.js";
import { atBudget, BudgetExhaustedError, budgetedModel } from "./budgetStop.js";
import { type CallCheck, CallGuard } from "./callGuard.js";
import { textStream } from "./deltas.js";
import { toolImagesMessage } from "./images.js";
import { requestFingerprint } from "./requestFingerprint.js";
import { ScopeJournal } from "./scopeJournal.js";
import { failedByPerson, needsApproval } from "./toolApproval.js";
import { decisionsOn, idempotencyKeyOf, parseArguments, runToolCalls, type ToolRound } from "./toolExecution.js";
import {
  failureDecisionsOn,
  failureOf,
  intentKeyOf,
  mayWaitForPerson,
  nextAttemptOf,
  pauseOn,
  recordFailedAttempt,
} from "./toolFailure.js";
import { ToolPolicyGate } from "./toolPolicy.js";

/** The ports every agent's think/act loop uses. */
export type LoopPorts = Pick<Ports, "model" | "journal" | "events" | "runs" | "files" | "interrupts" | "notifyQueue" | "spend"> &
  Partial<Pick<Ports, "policies">> &
  SettingsOf<"budgets"> & { settings: Partial<Pick<Settings, "model" | "toolSources">> };

/** One run, seen by an agent: its id, the ports it may use, and when to hand back. */
export interface RunScope<P extends LoopPorts = LoopPorts> {
  runId: string;
  ports: P;
  /** The run's guardrail checks (its record's): output and tool results are checked here. */
  guardrails?: GuardrailCheck[];
  /** The run's tenant, when the caller read its record: tool policies are looked up by it without another read. */
  tenantId?: string;
  /** The tenant's own bound on its code sandboxes running at once, as the run recorded it (run_code reads no setting). */
  maxSandboxes?: number;
  /** The run's subscription, when the caller read its record (null: it has none): a model wait nobody hears of is not queued. */
  webhook?: RunRecord["webhook"] | null;
  /** The run's budget, when the caller read its record (null: it has none): model calls are reserved against it without another read. */
  budget?: RunBudget | null;
  /** Epoch ms after which a turn should hand back to the state machine rather than start a round. */
  deadline?: number;
}

export interface LoopOptions {
  /** Journal scope: one per agent instance ("react", "plan#2", "task#1#t3"). */
  scope: string;
  role: AgentRole;
  taskId?: string;
  /** The system prompt, built fresh for every model call (date, files, plan). */
  system: (round: number) => string | Promise<string>;
  /** Earlier turns (session memory) and the current user message. */
  conversation: ChatMessage[];
  tools: ToolSet;
  /** The most tools one request may carry (the role's cap; default 128): past it the agent searches (find_tools). */
  maxTools?: number;
  maxRounds: number;
  /** Parallel tool calls of one turn run at most this many at once. */
  toolConcurrency?: number;
  /** Which tool calls wait for a person's approval first. */
  toolApproval?: ApprovalPolicy["tools"];
  /** What a tool failure a person can fix does: pause the task (default), or report the error to the model. */
  toolFailures?: ToolFailures;
  /** The scope's journal, when the caller has loaded it already. */
  journal?: ScopeJournal;
  /** Whether the run is still going, when the caller has just read it (saves the first check). */
  runActive?: boolean | Promise<boolean>;
  /** An empty reply is a valid end of the turn (the planner's "nothing to change"). */
  allowEmptyAnswer?: boolean;
  /** Ends the turn after these tool calls (e.g. the planner's plan is made: no model call to acknowledge it). */
  endsTurn?: (calls: ToolCall[], outcomes: ToolOutcome[]) => boolean;
  /** The role's model sees images: those its tools return are shown after the round's results, within these limits. */
  toolImages?: ImageLimits;
}

/** Paid model and tool calls of this loop (replayed ones are not counted again). */
export type LoopUsage = Pick<Usage, "promptTokens" | "completionTokens" | "llmCalls" | "toolCalls" | "fallbackCalls">;

export type LoopOutcome = (
  | { kind: "answer"; text: string; rounds: number }
  | { kind: "paused"; rounds: number }
  | { kind: "interrupted"; interruptId: string; rounds: number }
  /** Out of rounds, or (`exhausted`: why) at a token or cost budget: the text says what was done. */
  | { kind: "budget"; text: string; rounds: number; exhausted?: string }
  /** The run ended meanwhile (cancelled, timed out): stop without doing anything more. */
  | { kind: "ended"; rounds: number }
  /** The model answered with nothing, also after being told so. */
  | { kind: "empty"; rounds: number }
) & {
  usage: LoopUsage;
  /**
   * The journal, with records not yet written: the caller flushes it together with its own final
   * writes (one batch), and awaits `events` (appended in the background, in order) with them.
   */
  journal: ScopeJournal;
  events: Promise<unknown>;
};

const OUTPUT_PREVIEW = 2_000;

/** Sent once after an empty model answer. */
export const EMPTY_ANSWER_CORRECTION = "Your reply was empty. Reply with your answer to the task, or call a tool.";

/** The answer to each call of a reply cut at the output limit (the call does not run). */
export const CUT_TOOL_CALL =
  "Not run: your reply was cut off at the output limit while you were writing this call, so its arguments are incomplete. Send a smaller call: split the content over several calls, or write less in one.";

/** What a task or run reports when the model answered with nothing twice. */
export const EMPTY_ANSWER_ERROR = "The model returned an empty answer twice (the second time after being told so).";

/**
 * The think/act loop every agent runs: ask the model, run the tools it calls, feed the results
 * back, until it answers. Each model response and tool result is journaled, so a retried step
 * replays them (no repeated side effects, no repeated cost) and a later turn resumes here.
 *
 * Between a model reply and the next model call there is no round trip to the table in the common
 * case (read tools): see callGuard.ts. Before a write tool or a person's decision, the journal is
 * written first (the call is recorded before its side effect) and the status checked.
 */
export async function runAgentLoop(run: RunScope, options: LoopOptions): Promise<LoopOutcome> {
  const loop = await startLoop(run, options);
  const { conversation, journal } = loop;
  // The caller awaits `events` with its last writes.
  const done = <O extends object>(outcome: O): O & { usage: LoopUsage; journal: ScopeJournal; events: Promise<unknown> } => ({
    ...outcome,
    usage: loop.usage,
    journal,
    events: loop.events.settled(),
  });
  let emptyAnswers = 0;

  for (let round = 0; round <= options.maxRounds; round++) {
    // The round budget is spent: one last call without tools delivers what was done and what was not.
    const delivering = round === options.maxRounds;
    if (delivering) conversation.push({ role: "user", content: budgetDelivery(options.maxRounds) });
    const recorded = journal.has(round, "llm");
    if (run.deadline && Date.now() > run.deadline && !recorded) return done({ kind: "paused", rounds: round });
    const check = recorded ? undefined : await loop.guard.beforeCall(round);
    if (!recorded && !check) return done({ kind: "ended", rounds: round });

    const reply = await askModel(loop, round, delivering, check).catch((error: unknown) => {
      if (!(error instanceof BudgetExhaustedError)) throw error;
      return atBudget(loop.run, { scope: options.scope, round, taskId: options.taskId }, error, conversation);
    });
    if (reply && "kind" in reply) return done({ ...reply, rounds: round });
    if (!reply) return done({ kind: "ended", rounds: round });
    const { response, replayed, inherited } = reply;
    // What people may see of the reply (output guardrails: redacted; a block ends the run).
    const shown = await loop.textGuard.shown(loop.restore(response.content ?? ""));
    // A delivery has no tools to call: calls it makes anyway are not run.
    const calls = delivering ? [] : response.toolCalls.map((call) => loop.window.restoreArguments(call));
    if (response.finishReason === "length" && calls.length) {
      // Cut while writing its calls: nothing runs; each call is answered so the model can send a smaller one.
      if (!replayed && !inherited) addUsage(loop.usage, response);
      conversation.push(assistantMessage(response));
      for (const call of calls) conversation.push({ role: "tool", tool_call_id: call.id, content: CUT_TOOL_CALL });
      continue;
    }
    if (!replayed) countAndAnnounce(loop, response, calls, reply.streamed, shown, inherited);
    if (delivering) {
      const text = shown.trim();
      return done({ kind: "budget", rounds: round, text: text || `${budgetStop(options.maxRounds)} The model gave no summary.` });
    }
    conversation.push(assistantMessage(response));
    if (calls.length === 0 && !response.content?.trim() && !options.allowEmptyAnswer) {
      // An empty answer is not an answer: once, the model is told so and asked again; twice, the agent fails.
      if (emptyAnswers++ === 0) {
        conversation.push({ role: "user", content: EMPTY_ANSWER_CORRECTION });
        continue;
      }
      return done({ kind: "empty", rounds: round + 1 });
    }
    if (calls.length === 0) return done({ kind: "answer", text: shown, rounds: round + 1 });

    const acted = await runCalls(loop, round, calls);
    if (acted.kind === "ended") return done({ kind: "ended", rounds: round });
    if (acted.kind === "interrupted") return done({ kind: "interrupted", interruptId: acted.interruptId, rounds: round });
    if (acted.endsTurn) return done({ kind: "answer", text: shown, rounds: round + 1 });
  }
  throw new Error("unreachable: the last round delivers");
}

/** One agent's loop as it runs: what its phases read, and the conversation and usage they add to. */
interface Loop {
  run: RunScope;
  options: LoopOptions;
  journal: ScopeJournal;
  conversation: ChatMessage[];
  tools: ToolSet;
  /** The role's model: its window and output limit. */
  limits: { contextWindow: number; maxOutputTokens: number };
  window: ContextWindow;
  /** What a person reads: the model's placeholders back to the real URLs. */
  restore: (text: string) => string;
  source: { agent: AgentRole; taskId?: string };
  usage: LoopUsage;
  events: BackgroundEvents;
  guard: CallGuard;
  policy: ToolPolicyGate;
  /** The run's guardrails on what this agent shows and the outside text its tools bring in. */
  textGuard: TextGuard;
}

/** The loop's start: its journal (loaded unless the caller has it), its tools and the prompt's window. */
async function startLoop(scope: RunScope, options: LoopOptions): Promise<Loop> {
  // Every model call of the loop (its tools' too) is reserved against the run's budgets first.
  const run = { ...scope, ports: { ...scope.ports, model: budgetedModel(scope) } };
  const { ports } = run;
  const journal = options.journal ?? (await ScopeJournal.load(ports.journal, run.runId, options.scope));
  // The prompt's budget: the setting, within what the role's model leaves beside its output limit.
  const limits = windowOf(settingsFor(options.role, ports.settings.model?.roles), ports.model.name);
  const window = new ContextWindow({
    model: ports.model.name,
    budgetTokens: Math.min(ports.settings.budgets.contextTokens, limits.contextWindow - limits.maxOutputTokens),
    turnStart: options.conversation.length,
    reread: rereadHint(options.tools),
  });
  const source = { agent: options.role, ...(options.taskId ? { taskId: options.taskId } : {}) };
  const usage: LoopUsage = { promptTokens: 0, completionTokens: 0, llmCalls: 0, toolCalls: 0 };
  return {
    run,
    options,
    journal,
    conversation: [...options.conversation],
    tools: withToolSearch(options.tools, options.maxTools ?? DEFAULT_TOOL_CAP),
    limits,
    window,
    restore: (text) => window.restoreText(text),
    source,
    usage,
    events: new BackgroundEvents(run),
    guard: new CallGuard(run, journal, options.runActive),
    policy: new ToolPolicyGate(ports, run.runId, usage, { tenantId: run.tenantId, cacheMs: ports.settings.toolSources?.catalogCacheMs }),
    textGuard: new TextGuard(run.ports, run.runId, run.guardrails, source, usage),
  };
}

/**
 * The round's model call, journaled (a replay reads the recorded reply instead). Undefined when the
 * run ended meanwhile: a call aborted for that is no failure; a failed write of the last round's
 * records fails the step (its error, not the aborted call's).
 */
async function askModel(
  loop: Loop,
  round: number,
  delivering: boolean,
  check: CallCheck | undefined,
): Promise<{ response: ChatResponse; replayed: boolean; inherited?: boolean; streamed: boolean } | undefined> {
  const { run, window, conversation } = loop;
  // What find_tools loaded in earlier rounds is offered from this one on.
  const specs = delivering ? [] : loop.tools.specs();
  // Built on replay too: the URL placeholders of a recorded response must map the same way.
  const system = await loop.options.system(round);
  const prompt = window.build(system, conversation, specs);
  const fingerprint = requestFingerprint(prompt, specs);
  let streamed = false;
  const answered = loop.journal.once<ChatResponse>(
    round,
    "llm",
    "",
    async () => {
      const stream = textStream(run.ports, run.runId, loop.source, { restore: loop.restore, guard: loop.textGuard, webhook: run.webhook });
      try {
        const onText = (text: string) => {
          streamed = true;
          stream.onText(text);
        };
        return withoutIdleReasoning(
          await completeWithinWindow(
            loop,
            { system, prompt, specs, check },
            { onText, onReasoning: stream.onReasoning, onRetry: stream.onRetry },
          ),
        );
      } catch (error) {
        // The run ended, or the last round's records could not be written; or the call was not made (a budget).
        if (check?.signal.aborted || error instanceof BudgetExhaustedError) throw error;
        await countFailedCall(loop, error);
        throw error;
      } finally {
        loop.events.add(stream.close());
      }
    },
    // A replay that parts from its journal here shows the first message that differs.
    { defer: true, fingerprint, prompt },
  );
  const reply = await answered.catch(async (error) => {
    if (await check?.ended()) return undefined;
    throw error;
  });
  if (!reply || (await check?.ended())) return undefined;
  return { response: reply.value, replayed: reply.replayed, inherited: reply.inherited, streamed };
}

/** One model call; too long for the provider's window, it compacts one more block of the turn and asks again. */
async function completeWithinWindow(
  loop: Loop,
  call: { system: string; prompt: ChatMessage[]; specs: ToolSpec[]; check: CallCheck | undefined },
  stream: Pick<ChatRequest, "onText" | "onReasoning" | "onRetry">,
): Promise<ChatResponse> {
  const { window, conversation, limits } = loop;
  const { system, specs, check } = call;
  let prompt = call.prompt;
  for (;;) {
    try {
      return await loop.run.ports.model.complete({
        role: loop.options.role,
        messages: prompt,
        tools: specs,
        signal: check?.signal,
        ...stream,
      });
    } catch (error) {
      const overflow = contextOverflowOf(error);
      if (!overflow || check?.signal.aborted) throw error;
      if (!window.shrink(system, conversation, specs, overflow.window, limits.maxOutputTokens)) {
        const size = overflow.size ?? window.countTokens(prompt);
        throw new StepError(
          StepErrorCode.ModelRejected,
          `The prompt (${size} tokens) does not fit the model's context window (${overflow.window ?? limits.contextWindow} tokens), even with this turn's tool outputs compacted. Raise contextWindow in the role settings, or use a model with a larger window.`,
          error,
        );
      }
      prompt = window.build(system, conversation, specs);
    }
  }
}

/** A failed call was paid for too: counted on the run before the error ends this step. */
async function countFailedCall(loop: Loop, error: unknown): Promise<void> {
  const { usage } = loop;
  const paid = paidAttemptsOf(error);
  await loop.run.ports.runs
    .update(loop.run.runId, {}, undefined, {
      llmCalls: usage.llmCalls + paid.paidCalls,
      promptTokens: usage.promptTokens + (paid.usage?.promptTokens ?? 0),
      completionTokens: usage.completionTokens + (paid.usage?.completionTokens ?? 0),
      toolCalls: usage.toolCalls,
    })
    .catch(() => undefined);
}

/** A new reply (not a replayed one): its usage counted (unless inherited: paid for by the run it came from), its thought (unless streamed) and calls announced. */
function countAndAnnounce(
  loop: Loop,
  response: ChatResponse,
  calls: ToolCall[],
  streamed: boolean,
  shown: string,
  inherited?: boolean,
): void {
  const { usage, source } = loop;
  if (!inherited) {
    addUsage(usage, response);
    if (response.fallback) usage.fallbackCalls = (usage.fallbackCalls ?? 0) + 1;
    usage.toolCalls += calls.length;
  }
  loop.events.append([
    // Streamed text reached clients as agent.delta already: one event per fact.
    ...(!streamed && shown.trim() ? [{ type: "agent.thought", data: { ...source, text: shown } } as const] : []),
    ...calls.map((call) => {
      const args = parseArguments(call.arguments);
      const persona = personaOf(args, loop.tools.get(call.name), call.name);
      return {
        type: "tool.called",
        data: { ...source, callId: call.id, tool: call.name, arguments: withoutPersona(args), persona },
      } as const;
    }),
  ]);
}

/**
 * The round's tool calls: those with side effects or a person in the loop are recorded first, and
 * a cancel that came while the model was thinking stops them; calls that wait for a person hand
 * the turn back; the rest run, each result shown as its call ends and read by the model in the
 * calls' order.
 */
async function runCalls(
  loop: Loop,
  round: number,
  calls: ToolCall[],
): Promise<{ kind: "ended" } | { kind: "interrupted"; interruptId: string } | { kind: "ran"; endsTurn: boolean }> {
  const { run, options, tools, journal, source } = loop;
  const toolRound: ToolRound = {
    runId: run.runId,
    scope: options.scope,
    round,
    agent: options.role,
    taskId: options.taskId,
    ...(run.tenantId ? { tenant: { tenantId: run.tenantId, maxSandboxes: run.maxSandboxes } } : {}),
    webhook: run.webhook,
    tools,
    emit: (bodies: EventBody[]) => loop.events.append(bodies),
    journal,
    ports: { ...run.ports, model: countedModel(run.ports.model, loop.usage) },
    output: loop.textGuard,
    approval: options.toolApproval,
    toolFailures: options.toolFailures,
    policy: loop.policy,
    concurrency: options.toolConcurrency ?? run.ports.settings.budgets.toolConcurrency,
  };
  // A call that may wait for a person records its intent only once it is decided: an intent is a start.
  const mayWait = calls.some((call) => mayWaitForPerson(toolRound, call));
  if (calls.some((call) => hasEffects(toolRound, call))) {
    if (!mayWait) recordIntents(toolRound, calls);
    if (!(await loop.guard.writtenAndStillGoing())) return { kind: "ended" };
  }
  const gate = await decisionsOn(toolRound, calls);
  if (gate.waitingFor) return { kind: "interrupted", interruptId: gate.waitingFor };
  if (mayWait) {
    const failures = await failureDecisionsOn(toolRound, calls);
    if (failures.waitingFor) return { kind: "interrupted", interruptId: failures.waitingFor };
    for (const call of calls) {
      const decision = failures.decisions.get(call.id);
      if (decision?.decision === "fail") throw failedByPerson(call, decision);
      // A retry runs the call as it was approved (an approval's edited arguments stay).
      if (decision && (decision.decision !== "retry" || !gate.decisions.has(call.id))) gate.decisions.set(call.id, decision);
    }
    // A rejected or skipped call does not start: no intent.
    const starting = calls.filter((call) => !["reject", "skip", "answer"].includes(gate.decisions.get(call.id)?.decision ?? ""));
    if (recordIntents(toolRound, starting) && !(await loop.guard.writtenAndStillGoing())) return { kind: "ended" };
  }
  const announce = (call: ToolCall, value: ToolOutcome) =>
    loop.events.append([
      {
        type: "tool.result",
        data: { ...source, callId: call.id, tool: call.name, ok: value.ok, output: (value.shown ?? value.output).slice(0, OUTPUT_PREVIEW) },
      },
    ]);
  // Results checked as input (guardrails on tool results) are shown once checked.
  const checked = loop.textGuard.checksToolResults;
  const outcomes = await runToolCalls(toolRound, calls, gate.decisions, checked ? undefined : announce);
  // A call that failed for a reason a person can fix waits for them; the round's other results are kept.
  const failed = calls.flatMap((call, i) => {
    const failure = failureOf(outcomes[i].value, nextAttemptOf(journal, round, call.id));
    return failure ? [{ call, failure }] : [];
  });
  if (failed.length) {
    for (const { call, failure } of failed) recordFailedAttempt(journal, round, call, failure);
    await journal.flush();
    const first = await pauseOn(toolRound, failed[0].call, failed[0].failure);
    return { kind: "interrupted", interruptId: first.interruptId };
  }
  for (const [i, call] of calls.entries()) {
    const { value } = outcomes[i];
    const output = checked ? await loop.textGuard.toolResult(tools.get(call.name), value.output) : value.output;
    if (checked) announce(call, output === value.output ? value : { ...value, output, shown: undefined });
    if (value.loads) tools.load?.(value.loads);
    loop.conversation.push({ role: "tool", tool_call_id: call.id, content: output });
  }
  if (options.toolImages) {
    const names = outcomes.flatMap((o) => o.value.images ?? []);
    const shown = await toolImagesMessage(run.ports.files, run.runId, names, options.toolImages, loop.conversation);
    if (shown) loop.conversation.push(shown);
  }
  const endsTurn = options.endsTurn?.(
    calls,
    outcomes.map((o) => o.value),
  );
  return { kind: "ran", endsTurn: endsTurn === true };
}

/**
 * A write call is journaled as an intent, with the key the tool receives, before it runs: a retry
 * after a crash between its side effect and its result finds the intent, and an idempotent tool
 * deduplicates by the same key (another asks a person: toolFailure.ts). Whether any was recorded.
 */
function recordIntents(round: ToolRound, calls: ToolCall[]): boolean {
  const { journal } = round;
  let recorded = false;
  for (const call of calls) {
    if (round.tools.get(call.name)?.access !== "write" || journal.has(round.round, "tool", call.id)) continue;
    const intent = intentKeyOf(call.id, nextAttemptOf(journal, round.round, call.id));
    if (journal.has(round.round, "intent", intent)) continue;
    journal.record(round.round, "intent", intent, { tool: call.name, idempotencyKey: idempotencyKeyOf(round, call) });
    recorded = true;
  }
  return recorded;
}

/** The last request of an agent whose rounds are spent (newAgent's forced Deliver). */
export const budgetDelivery = (rounds: number) =>
  `You have used all ${rounds} rounds of your budget, so you cannot call tools any more. Reply now, without tools: say what you did and found (figures, file names), and what is not done yet and why.`;

/** What a run or task records when its agent stopped at the round budget. */
export const budgetStop = (rounds: number) => `Stopped at the round budget (${rounds} rounds).`;

function addUsage(usage: LoopUsage, response: ChatResponse): void {
  usage.promptTokens += response.usage.promptTokens;
  usage.completionTokens += response.usage.completionTokens;
  usage.llmCalls += response.calls ?? 1;
}

/** The model as tools see it: a tool's own model calls (write_report's writer) count on the run too. */
function countedModel(model: ChatModel, usage: LoopUsage): ChatModel {
  return {
    name: model.name,
    ...moderationOf(model),
    complete: async (request) => {
      const response = await model.complete(request);
      addUsage(usage, response);
      return response;
    },
  };
}

/** How a compacted tool output is read again: its artifact, or the same call of a read tool. */
function rereadHint(tools: ToolSet): RereadHint {
  return (call, output) => {
    const pointer = output.match(/read_artifact \{[^}]*\}/)?.[0];
    if (pointer) return `call ${pointer}`;
    const tool = tools.get(call.name);
    if (tool?.access !== "read" || tool.asksUser) return undefined;
    return call.arguments.length <= 300
      ? `call ${call.name} again with ${call.arguments}`
      : `call ${call.name} again with the same arguments`;
  };
}

/** Reasoning is kept (and journaled) only on a tool-call turn: no provider wants it back elsewhere. */
function withoutIdleReasoning(response: ChatResponse): ChatResponse {
  if (!response.reasoning || response.toolCalls.length) return response;
  const { reasoning: _, ...rest } = response;
  return rest;
}

/** A call that changes something or waits for a person (a read tool can simply run again on replay). */
function hasEffects(round: ToolRound, call: ToolCall): boolean {
  const tool = round.tools.get(call.name);
  if (!tool || tool.pure) return false;
  return tool.access === "write" || tool.asksUser === true || needsApproval(tool, round.approval);
}

/** The reply as it goes back to the model; a tool-call turn keeps the reasoning its provider wants back. */
function assistantMessage(response: ChatResponse): ChatMessage {
  return {
    role: "assistant",
    content: response.content,
    ...(response.toolCalls.length && response.reasoning ? { reasoning_content: response.reasoning } : {}),
    ...(response.toolCalls.length
      ? {
          tool_calls: response.toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : {}),
  };
}
