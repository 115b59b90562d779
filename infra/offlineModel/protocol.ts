// The OpenAI Chat Completions wire format: request validation, response bodies,
// stream chunks, usage and error shapes, so the real `openai` client works unchanged.

import { z } from "zod";
import { textOf } from "./conversation.js";
import type { BrainReply, ChatMessage } from "./types.js";

export const MODEL_ID = "stepwise-offline";

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const Message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string().optional(),
        type: z.string().optional(),
        function: z.looseObject({ name: z.string(), arguments: z.string() }).optional(),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
});
const Tool = z.looseObject({
  type: z.string(),
  function: z.looseObject({ name: z.string(), description: z.string().optional(), parameters: z.unknown().optional() }).optional(),
});

export const ChatCompletionRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(Message).min(1),
  tools: z.array(Tool).optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export interface ApiError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = null): ApiError {
  return { error: { message, type: "invalid_request_error", param, code } };
}

/** Turns a parsed JSON body into a request, or into the error OpenAI would answer. */
export function parseCompletionRequest(body: unknown): { request: ChatCompletionRequest } | { error: ApiError } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { error: invalidRequest("The request body must be a JSON object.") };
  }
  if (!("messages" in body)) {
    return { error: invalidRequest("Missing required parameter: 'messages'.", "messages", "missing_required_parameter") };
  }
  const parsed = ChatCompletionRequest.safeParse(body);
  if (parsed.success) return { request: parsed.data };
  const issue = parsed.error.issues[0];
  const param = issue.path.map(String).join(".") || null;
  return { error: invalidRequest(`Invalid value for '${param ?? "body"}': ${issue.message}`, param, "invalid_value") };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A rough but honest count: about four characters per token. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function usageOf(messages: readonly ChatMessage[], reply: BrainReply): Usage {
  const promptText = messages
    .map(
      (message) =>
        textOf(message.content) +
        (message.tool_calls ?? []).map((call) => (call.function?.name ?? "") + (call.function?.arguments ?? "")).join(""),
    )
    .join("");
  const completionText = (reply.content ?? "") + reply.toolCalls.map((call) => call.name + JSON.stringify(call.arguments)).join("");
  const prompt_tokens = estimateTokens(promptText);
  const completion_tokens = estimateTokens(completionText);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** Identity shared by a response and all of its chunks. */
export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
}

/** The fields every response and chunk starts with, in OpenAI's order. */
function header(meta: ResponseMeta, object: "chat.completion" | "chat.completion.chunk") {
  return { id: meta.id, object, created: meta.created, model: meta.model };
}

function finishReason(reply: BrainReply): "stop" | "tool_calls" {
  return reply.toolCalls.length > 0 ? "tool_calls" : "stop";
}

function wireToolCalls(reply: BrainReply) {
  return reply.toolCalls.map((call) => ({
    id: call.id,
    type: "function" as const,
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
}

export function completionBody(meta: ResponseMeta, reply: BrainReply, usage: Usage) {
  const toolCalls = wireToolCalls(reply);
  return {
    ...header(meta, "chat.completion"),
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(reply),
      },
    ],
    usage,
  };
}

/** The chunks of a streamed answer, in order; `usage` is set when the client asked for it. */
export function streamChunks(meta: ResponseMeta, reply: BrainReply, usage: Usage | undefined): object[] {
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    ...header(meta, "chat.completion.chunk"),
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    ...(usage ? { usage: null } : {}),
  });
  const chunks: object[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of textPieces(reply.content ?? "")) chunks.push(chunk({ content: piece }));
  wireToolCalls(reply).forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }));
    for (const piece of argumentPieces(call.function.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, finishReason(reply)));
  if (usage) chunks.push({ ...header(meta, "chat.completion.chunk"), choices: [], usage });
  return chunks;
}

/**
 * Splits text into pieces of up to three words, keeping every character. Real streams cut through
 * words (tokens) too: a piece with an e-mail address is cut before its "@", so the address comes in
 * two deltas (what output guardrails must redact whole).
 */
function textPieces(text: string): string[] {
  if (text === "") return [];
  const pieces = text.match(/\s*\S+(?:\s+\S+){0,2}\s*/g) ?? [text];
  return pieces.flatMap((piece) => {
    const at = piece.search(/\S@\S/) + 1;
    return at > 0 ? [piece.slice(0, at), piece.slice(at)] : [piece];
  });
}

/** Splits a JSON string into three pieces that cut through it mid-token, as real streams do. */
function argumentPieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 3));
  const pieces: string[] = [];
  for (let start = 0; start < json.length; start += size) pieces.push(json.slice(start, start + size));
  return pieces;
}

export function modelList(created: number) {
  return { object: "list", data: [{ id: MODEL_ID, object: "model", created, owned_by: "stepwise" }] };
}
