// Shapes the offline model reads and writes. They mirror the parts of the OpenAI
// Chat Completions request it needs, loosely, so any valid request fits.

export type MessageContent =
  | string
  | ReadonlyArray<{ type: string; text?: string | undefined; image_url?: { url: string } | undefined }>
  | null
  | undefined;

export interface ChatMessage {
  role: string;
  content?: MessageContent;
  tool_calls?:
    | ReadonlyArray<{
        id?: string | undefined;
        type?: string | undefined;
        function?: { name: string; arguments: string } | undefined;
      }>
    | undefined;
  tool_call_id?: string | undefined;
}

export interface ToolSpec {
  type: string;
  function?: { name: string; description?: string | undefined; parameters?: unknown } | undefined;
}

export interface BrainRequest {
  messages: readonly ChatMessage[];
  tools?: readonly ToolSpec[] | undefined;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface BrainReply {
  content: string | null;
  toolCalls: ToolCall[];
}

/** What a role decides before call ids are assigned. */
export interface Decision {
  content: string | null;
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export function say(text: string): Decision {
  return { content: text, calls: [] };
}

export function callTools(calls: Decision["calls"]): Decision {
  return { content: null, calls };
}
