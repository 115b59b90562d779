// The deterministic offline model. It does not reason: it recognises its role
// from the tools it is offered and makes the moves that exercise the orchestrator.

import { createHash } from "node:crypto";
import { offeredToolNames } from "./conversation.js";
import { deliverAtBudget, execute, isBudgetDelivery } from "./executor.js";
import { isGuardrailJudging, judgeGuardrail } from "./guardrails.js";
import { honourInstructions } from "./instructions.js";
import { isJudging, judge } from "./judge.js";
import { plan } from "./planner.js";
import { isReportWriting, writeReportText } from "./reportWriter.js";
import { route } from "./router.js";
import { summarize } from "./summarizer.js";
import { isTitling, writeTitle } from "./title.js";
import type { BrainReply, BrainRequest, Decision, ToolCall } from "./types.js";

export function respond(request: BrainRequest): BrainReply {
  const decision = honourInstructions(request.messages, decide(request));
  return { content: decision.content, toolCalls: withIds(decision.calls, request) };
}

function decide({ messages, tools }: BrainRequest): Decision {
  const offered = offeredToolNames(tools);
  if (offered.has("choose_mode")) return route(messages);
  if (offered.has("planning")) return plan(messages, offered);
  if (offered.size === 0 && isTitling(messages)) return writeTitle(messages);
  if (offered.size === 0 && isJudging(messages)) return judge(messages);
  if (offered.size === 0 && isGuardrailJudging(messages)) return judgeGuardrail(messages);
  if (offered.size === 0 && isBudgetDelivery(messages)) return deliverAtBudget(messages);
  if (offered.size === 0) return isReportWriting(messages) ? writeReportText(messages) : summarize(messages);
  return execute(messages, offered, tools);
}

/** Ids come from a hash of the conversation so the same input always yields the same ids. */
function withIds(calls: Decision["calls"], request: BrainRequest): ToolCall[] {
  const conversationHash = sha256(JSON.stringify([request.messages, request.tools ?? []]));
  return calls.map((call, index) => ({ id: `call_${sha256(`${conversationHash}:${index}`).slice(0, 24)}`, ...call }));
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
