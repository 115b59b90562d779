import { AgentError } from "../errors.js";
import { type ContractReply, type ContractTool, contractPrompt, MAX_CONSECUTIVE_FAILURES, parseContractReply } from "./jsonContract.js";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, PaidAttempts, ToolCall, ToolSpec } from "./types.js";

/**
 * JSON contract mode (the newAgent seed) for models without native tool calling. Wraps another
 * ChatModel: the tools are described in the system message instead of sent as `tools`, the model
 * replies with one JSON object (tool calls or the final answer), and the reply is read tolerantly
 * (parseContractReply). A reply that cannot be used is sent back with the parser's error and the
 * model asked again; MAX_CONSECUTIVE_FAILURES in a row end the call with an AgentError
 * ("json_contract_failed").
 *
 * The history is rewritten into roles such models accept: an assistant tool call becomes the JSON
 * the model would have written, a tool result becomes a user message "Result of <tool> (<id>): …".
 *
 * Streaming: the raw reply is JSON, not text for a person, and is only known to be the answer once
 * parsed, so nothing is forwarded while it streams. A final answer is passed to `onText` once, whole,
 * after parsing (so the deltas still add up to `content`); tool-call replies send no text.
 */
export class JsonContractModel implements ChatModel {
  readonly name: string;

  constructor(private readonly inner: ChatModel) {
    this.name = inner.name;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const tools = request.tools ?? [];
    if (tools.length === 0) {
      // Nothing to call: a plain completion. Only a history with tool turns needs rewriting.
      if (!request.messages.some(isToolProtocol)) return this.inner.complete(request);
      return this.inner.complete({ ...request, messages: plainHistory(request.messages, false) });
    }

    const messages = withContract(plainHistory(request.messages, true), contractPrompt(tools.map(toContractTool)));
    // Ids must be the same when a step is retried (the journal and interrupts key on them) and
    // differ between turns of one conversation: the number of assistant turns since the current
    // user message does both (that part of the prompt is never cut to the budget, older turns are).
    const currentTurn = request.messages.findLastIndex((m) => m.role === "user");
    const turn = request.messages.slice(currentTurn + 1).filter((m) => m.role === "assistant").length;
    const usage = { promptTokens: 0, completionTokens: 0 };
    let lastError = "";
    for (let attempt = 1; attempt <= MAX_CONSECUTIVE_FAILURES; attempt++) {
      const { signal, role, settings, onRetry } = request;
      const reply = await this.inner.complete({ messages, signal, role, settings, onRetry });
      usage.promptTokens += reply.usage.promptTokens;
      usage.completionTokens += reply.usage.completionTokens;
      const text = reply.content ?? "";
      const parsed = parseContractReply(text);
      if (parsed.ok) {
        const response = toResponse(parsed.value, turn, usage, request.onText);
        // A tool-call turn keeps its reasoning where the provider wants it back, as in native mode.
        const reasoning = response.toolCalls.length && reply.reasoning ? { reasoning: reply.reasoning } : {};
        return { ...response, ...reasoning, ...(attempt > 1 ? { calls: attempt } : {}) };
      }
      lastError = parsed.error;
      // The bad reply stays verbatim so the model sees what it did wrong; the error says how to fix it.
      messages.push({ role: "assistant", content: text || "(an empty reply)" }, { role: "user", content: parsed.error });
    }
    // Every attempt was paid for: the error says so, and usage counts them.
    throw Object.assign(
      new AgentError(
        `The model did not follow the JSON contract ${MAX_CONSECUTIVE_FAILURES} times in a row: ${lastError}`,
        "json_contract_failed",
      ),
      { paidCalls: MAX_CONSECUTIVE_FAILURES, usage } satisfies PaidAttempts,
    );
  }
}

function toResponse(reply: ContractReply, turn: number, usage: ChatResponse["usage"], onText?: (delta: string) => void): ChatResponse {
  if ("answer" in reply) {
    if (reply.answer) onText?.(reply.answer);
    return { content: reply.answer, toolCalls: [], finishReason: "stop", usage };
  }
  const toolCalls: ToolCall[] = reply.toolCalls.map((call, i) => ({
    id: `call_${turn}_${i}`,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  }));
  return { content: null, toolCalls, finishReason: "tool_calls", usage };
}

function toContractTool(spec: ToolSpec): ContractTool {
  if (spec.type !== "function") {
    throw new AgentError(
      `JSON contract mode supports function tools only; "${spec.custom.name}" is a ${spec.type} tool.`,
      "json_contract_unsupported_tool",
    );
  }
  const { name, description, parameters } = spec.function;
  return { name, description: description ?? "", parameters: parameters ?? { type: "object", properties: {} } };
}

/** The contract goes at the end of the first system (or developer) message, or in a new one first. */
function withContract(messages: ChatMessage[], contract: string): ChatMessage[] {
  const at = messages.findIndex((m) => m.role === "system" || m.role === "developer");
  if (at < 0) return [{ role: "system", content: contract }, ...messages];
  const system = messages[at] as Extract<ChatMessage, { role: "system" | "developer" }>;
  const content =
    typeof system.content === "string"
      ? `${system.content}\n\n${contract}`
      : [...system.content, { type: "text" as const, text: contract }];
  return messages.map((m, i) => (i === at ? { ...system, content } : m));
}

function isToolProtocol(message: ChatMessage): boolean {
  return (
    message.role === "tool" ||
    message.role === "function" ||
    (message.role === "assistant" && Boolean(message.tool_calls?.length || message.function_call))
  );
}

/**
 * The history without the tool-calling roles. Assistant tool calls become the contract JSON (any
 * text beside them is dropped: the contract has no place for it); tool results become user
 * messages, consecutive ones merged into one because many chat templates require user and
 * assistant turns to alternate. With `answersAsJson`, plain assistant replies become
 * {"answer": …} too, so the model's own history shows it keeping the contract.
 */
function plainHistory(messages: readonly ChatMessage[], answersAsJson: boolean): ChatMessage[] {
  const toolNames = new Map<string, string>();
  const out: ChatMessage[] = [];
  let lastWasResult = false;
  for (const message of messages) {
    if (message.role === "assistant") {
      const calls = [
        ...(message.tool_calls ?? []).map((call) => {
          toolNames.set(call.id, call.type === "function" ? call.function.name : call.custom.name);
          return call.type === "function"
            ? { name: call.function.name, arguments: parseOrKeep(call.function.arguments) }
            : { name: call.custom.name, arguments: { input: call.custom.input } };
        }),
        ...(message.function_call ? [{ name: message.function_call.name, arguments: parseOrKeep(message.function_call.arguments) }] : []),
      ];
      const reasoning = (message as { reasoning_content?: string }).reasoning_content;
      if (calls.length)
        out.push({
          role: "assistant",
          content: JSON.stringify({ tool_calls: calls }),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
        });
      else if (answersAsJson) out.push({ role: "assistant", content: JSON.stringify({ answer: textOf(message.content) }) });
      else out.push(message);
      lastWasResult = false;
      continue;
    }
    if (message.role === "tool" || message.role === "function") {
      const result =
        message.role === "tool"
          ? `Result of ${toolNames.get(message.tool_call_id) ?? "tool call"} (${message.tool_call_id}): ${textOf(message.content)}`
          : `Result of ${message.name}: ${message.content ?? ""}`;
      const previous = out[out.length - 1];
      if (lastWasResult && previous) out[out.length - 1] = { role: "user", content: `${previous.content as string}\n\n${result}` };
      else out.push({ role: "user", content: result });
      lastWasResult = true;
      continue;
    }
    out.push(message);
    lastWasResult = false;
  }
  return out;
}

function textOf(content: string | readonly ({ type: string; text?: string; refusal?: string } | object)[] | null | undefined): string {
  if (typeof content === "string") return content;
  return (content ?? [])
    .map((part) => ("text" in part && typeof part.text === "string" ? part.text : "refusal" in part ? String(part.refusal) : ""))
    .join("");
}

function parseOrKeep(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}
