import { createHash } from "node:crypto";
import { budgetExtensionOf, extendRunBudget } from "../budget/extension.js";
import { DECISIONS_BY_KIND, type Interrupt, type Resolution, type ResolveInterruptRequest } from "../contracts/interrupts.js";
import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { BadRequestError, ConflictError, NotFoundError } from "../errors.js";
import { countMetric } from "../observability.js";
import type { Ports } from "../ports/index.js";
import type { Tool } from "../ports/tools.js";
import { type ResumePorts, resumeAfterDeadToken } from "../run/resume.js";
import { checkEditedArguments } from "./toolApproval.js";

/** Deterministic: a retried step finds the interrupt it opened instead of opening another. */
export function interruptIdFor(...parts: (string | number)[]): string {
  return `int_${createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 24)}`;
}

/** What opening an interrupt touches: the interrupt, the run's status and events, the notifier. */
export type InterruptPorts = Pick<Ports, "interrupts" | "runs" | "events" | "notifyQueue">;

/** What deciding one touches besides: the waiting execution (resumed, or restarted when gone). */
export type DecidePorts = InterruptPorts & ResumePorts;

/** Opens the interrupt (once) and tells clients the run waits for a person. */
export async function openInterrupt(
  ports: InterruptPorts,
  fields: Omit<Interrupt, "schemaVersion" | "status" | "createdAt">,
): Promise<Interrupt> {
  const { created, interrupt } = await ports.interrupts.open({
    schemaVersion: 1,
    status: "pending",
    createdAt: new Date().toISOString(),
    ...fields,
  });
  if (created) {
    countMetric("InterruptsOpened");
    await Promise.all([
      ports.runs.update(fields.runId, { status: "awaiting_input" }, ["running", "awaiting_input"]),
      ports.events.append(fields.runId, [
        {
          type: "interrupt.opened",
          data: {
            interruptId: interrupt.interruptId,
            kind: interrupt.kind,
            summary: interrupt.summary,
            taskId: interrupt.taskId,
            toolName: interrupt.toolName,
            callId: interrupt.callId,
            arguments: interrupt.arguments,
            question: interrupt.question,
            ...(interrupt.failure ? { failure: interrupt.failure } : {}),
            reason: interrupt.reason,
          },
        },
      ]),
      ports.notifyQueue.send({ kind: "awaiting_input", runId: fields.runId, interruptId: interrupt.interruptId }),
    ]);
  }
  return interrupt;
}

/**
 * A person's decision on an interrupt (the API). Validates it against the kind (and an edit's
 * arguments against the tool's schema: toolApproval.ts), records it once, and resumes the waiting
 * callback task. Repeating the same decision is a no-op; a different one after resolution is a conflict.
 */
export async function decideInterrupt(
  ports: DecidePorts,
  run: RunRecord,
  interruptId: string,
  request: ResolveInterruptRequest,
  findTool: (name: string) => Tool | undefined,
): Promise<Interrupt> {
  const runId = run.runId;
  const found = await ports.interrupts.getWithToken(runId, interruptId);
  if (!found) throw new NotFoundError(`No interrupt ${interruptId} on run ${runId}.`);
  const { interrupt } = found;
  const allowed = DECISIONS_BY_KIND[interrupt.kind];
  if (!allowed.includes(request.decision)) {
    throw new ConflictError(
      `${/^[aeiou]/.test(interrupt.kind) ? "An" : "A"} ${interrupt.kind} interrupt takes ${allowed.join(" or ")}, not ${request.decision}.`,
      { allowed },
    );
  }
  // A budget pause's approve carries the extension; every other kind's arguments are an edit's.
  const extension = interrupt.kind === "budget" ? budgetExtensionOf(request) : checkEditedArguments(interrupt, request, findTool);
  if (request.decision === "answer" && !request.message?.trim()) throw new BadRequestError("An answer needs a 'message'.");

  if (interrupt.status === "pending" && TERMINAL_STATUSES.has(run.status)) {
    throw new ConflictError(`Run ${runId} has ended (${run.status}); its interrupts can no longer be decided.`, { status: run.status });
  }
  const resolution: Resolution = {
    decision: request.decision,
    arguments: request.arguments,
    message: request.message,
    resolvedAt: new Date().toISOString(),
  };
  if (interrupt.status !== "pending" || !(await ports.interrupts.resolve(runId, interruptId, resolution))) {
    // Interrupts are never deleted: the one read above, if the second read finds none.
    const current = (await ports.interrupts.get(runId, interruptId)) ?? interrupt;
    if (current.status === "resolved" && current.resolution && sameDecision(current.resolution, resolution)) return current;
    throw new ConflictError(
      current.status === "resolved" && current.resolution
        ? `Interrupt ${interruptId} was already resolved with ${current.resolution.decision}.`
        : `Interrupt ${interruptId} is ${current.status} and can no longer be decided.`,
      { status: current.status, resolution: current.resolution },
    );
  }
  countMetric("InterruptsResolved");
  // Written before the run goes on, so its next model call is reserved against the extended budget.
  if (extension) await extendRunBudget(ports, runId, extension);
  await ports.events.append(runId, [
    { type: "interrupt.resolved", data: { interruptId, kind: interrupt.kind, decision: request.decision, message: request.message } },
  ]);
  await settleWaitingStatus(ports, runId);
  // If the callback task has not stored its token yet, it sees the decision itself and resumes.
  const token = (await ports.interrupts.getWithToken(runId, interruptId))?.taskToken;
  if (token && !(await completeWaitingTask(ports, token, interruptId)) && !(await resumeAfterDeadToken(ports, run))) {
    // The execution that waited is gone for good: the run has been ended, and the decision moves nothing.
    const ended = await ports.runs.get(runId);
    throw new ConflictError(`Run ${runId} can no longer continue: its execution has ended; the run is ${ended?.status}.`, {
      status: ended?.status,
    });
  }
  return { ...interrupt, status: "resolved", resolution };
}

/** awaiting_input while any interrupt is pending, running otherwise. Checked again after the write:
 * a parallel executor may open an interrupt in between. */
async function settleWaitingStatus(ports: Pick<Ports, "interrupts" | "runs">, runId: string): Promise<void> {
  const pending = async () => (await ports.interrupts.list(runId)).some((i) => i.status === "pending");
  if (await pending()) return;
  await ports.runs.update(runId, { status: "running" }, ["awaiting_input"]);
  if (await pending()) await ports.runs.update(runId, { status: "awaiting_input" }, ["running"]);
}

/**
 * Completes the waiting callback task. Returns false if the token is dead (used already, timed
 * out, or its execution has gone): the caller decides whether that matters.
 */
export async function completeWaitingTask(ports: Pick<Ports, "executions">, taskToken: string, interruptId: string): Promise<boolean> {
  return ports.executions.sendTaskSuccess(taskToken, { interruptId });
}

function sameDecision(a: Resolution, b: Resolution): boolean {
  return (
    a.decision === b.decision &&
    (a.message ?? "") === (b.message ?? "") &&
    JSON.stringify(a.arguments ?? null) === JSON.stringify(b.arguments ?? null)
  );
}
