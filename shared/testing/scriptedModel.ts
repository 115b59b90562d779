import type { ChatModel, ChatRequest, ChatResponse } from "../llm/types.js";

/** One reply of a scripted model: text, tool calls, or both. */
export interface ScriptedReply {
  text?: string;
  calls?: { id?: string; name: string; args: unknown }[];
  /** Stream the text (onText) before answering. */
  stream?: boolean;
  usage?: { promptTokens: number; completionTokens: number };
}

/** What to reply: from the request (a pure function replays the same way after a crash), or the next of a list. */
export type Script =
  | ((request: ChatRequest, index: number) => ScriptedReply | Error | Promise<ScriptedReply | Error>)
  | (ScriptedReply | Error)[];

/**
 * The model port, scripted (as openai-agents-js ships ScriptedModel): replies come from the script,
 * and every request is kept, so a test asserts what the agent sent and what it did with the reply.
 */
export class ScriptedModel implements ChatModel {
  readonly requests: ChatRequest[] = [];

  constructor(
    private readonly script: Script,
    readonly name = "gpt-4o-mini",
  ) {}

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const index = this.requests.length;
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const reply = Array.isArray(this.script) ? this.script[index] : await this.script(request, index);
    if (reply === undefined) throw new Error(`the script has no reply #${index + 1}`);
    if (reply instanceof Error) throw reply;
    if (reply.stream && reply.text) request.onText?.(reply.text);
    return {
      content: reply.text ?? null,
      toolCalls: (reply.calls ?? []).map((call, i) => ({
        id: call.id ?? `call_${index + 1}_${i + 1}`,
        name: call.name,
        arguments: typeof call.args === "string" ? call.args : JSON.stringify(call.args),
      })),
      finishReason: reply.calls?.length ? "tool_calls" : "stop",
      usage: reply.usage ?? { promptTokens: 10, completionTokens: 5 },
    };
  }
}

/** The text of the request's last user message (what a scripted reply usually depends on). */
export function lastUserText(request: ChatRequest): string {
  const user = [...request.messages].reverse().find((m) => m.role === "user");
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
}

/** The system prompt of the request: which agent is asking (planner, executor, summarizer, router). */
export function systemText(request: ChatRequest): string {
  const system = request.messages.find((m) => m.role === "system");
  return typeof system?.content === "string" ? system.content : "";
}
