import * as z from "zod";
import type { InterruptKind, ResolveInterruptRequest } from "../contracts/interrupts.js";

/**
 * A pause for a person as the agent protocols ask it: one question, one JSON Schema for the answer
 * (an MCP elicitation's requestedSchema, an AG-UI interrupt's responseSchema), and the answer
 * turned back into a decision on the interrupt.
 */

export function questionOf(pause: { kind: string; summary: string; question?: string }): string {
  return pause.kind === "ask_user" ? (pause.question ?? pause.summary) : pause.summary;
}

/** The answer's shape: a question takes an answer; an approval takes approve or reject, and why; a failed call retry, skip or fail. */
export function answerSchemaFor(kind: string) {
  if (kind === "ask_user") {
    return { type: "object" as const, properties: { answer: { type: "string" as const, title: "Your answer" } }, required: ["answer"] };
  }
  if (kind === "tool_failure") {
    return {
      type: "object" as const,
      properties: {
        decision: { type: "string" as const, title: "Decision", enum: ["retry", "skip", "fail"] },
        message: { type: "string" as const, title: "What the agent reads instead (skip), or why (fail)" },
      },
      required: ["decision"],
    };
  }
  return {
    type: "object" as const,
    properties: {
      decision: { type: "string" as const, title: "Decision", enum: ["approve", "reject"] },
      message: { type: "string" as const, title: "Why (for a rejection)" },
    },
    required: ["decision"],
  };
}

const Answer = z.object({ answer: z.string().trim().min(1).max(8_000) });
const Approval = z.object({ decision: z.enum(["approve", "reject"]), message: z.string().max(8_000).optional() });
const FailureDecision = z.object({ decision: z.enum(["retry", "skip", "fail"]), message: z.string().max(8_000).optional() });

/** A filled-in answer (it fits answerSchemaFor(kind)) as a decision; undefined when it does not fit. */
export function decisionFromAnswer(kind: InterruptKind, answer: unknown): ResolveInterruptRequest | undefined {
  if (kind === "ask_user") {
    const parsed = Answer.safeParse(answer);
    return parsed.success ? { decision: "answer", message: parsed.data.answer } : undefined;
  }
  const parsed = (kind === "tool_failure" ? FailureDecision : Approval).safeParse(answer);
  if (!parsed.success) return undefined;
  const message = parsed.data.message?.trim() ? parsed.data.message : undefined;
  return { decision: parsed.data.decision, ...(message ? { message } : {}) };
}

/** A person who declines to answer: an approval is rejected, a question answered with the refusal, a failed call skipped. */
export function declined(kind: InterruptKind, how: string): ResolveInterruptRequest {
  return { decision: kind === "ask_user" ? "answer" : kind === "tool_failure" ? "skip" : "reject", message: how };
}
