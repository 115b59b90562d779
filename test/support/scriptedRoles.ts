// Scenario routing for the scripted model: one scripted server serves every run of a test stack,
// and each request is handed to the scenario whose marker (`[[name]]`, written into a run's input)
// appears last in the request, together with the agent role that sent it. The role is read from the
// tools offered natively, or (JSON contract mode sends no `tools`) from the tool list of the
// contract in the system message, and an executor's prompt; no tools at all is the summarizer.

import type { ScriptedRequest, ScriptStep } from "./scriptedModel.js";

export type AgentRoleSeen = "router" | "planner" | "executor" | "react" | "summarizer";

/** One request as a scenario sees it. */
export interface Turn {
  /** Index in the scripted model's `requests`. */
  index: number;
  /** When the request arrived (ms since epoch, this process's clock). */
  at: number;
  request: ScriptedRequest;
  role: AgentRoleSeen;
  /** The scenario's marker, or undefined when no marker is present. */
  marker?: string;
  messages: SeenMessage[];
  /** Tool names offered, natively or through the JSON contract. */
  tools: string[];
}

export interface SeenMessage {
  role: string;
  content: string;
  tool_call_id?: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
}

export type Scenario = (turn: Turn, turns: Turn[]) => ScriptStep;

export class ScriptRouter {
  readonly turns: Turn[] = [];
  private readonly scenarios = new Map<string, Scenario>();

  /** `fallback` answers requests without a (known) marker. */
  constructor(private readonly fallback: Scenario = () => ({ text: "OK." })) {}

  on(marker: string, scenario: Scenario): this {
    this.scenarios.set(marker, scenario);
    return this;
  }

  /** Pass this to startScriptedModel. */
  readonly script = (request: ScriptedRequest, index: number): ScriptStep => {
    const messages = (request.messages ?? []).map(seen);
    const turn: Turn = {
      index,
      at: Date.now(),
      request,
      role: roleOf(request, messages),
      marker: lastMarker(messages),
      messages,
      tools: toolNames(request, messages),
    };
    this.turns.push(turn);
    const scenario = (turn.marker && this.scenarios.get(turn.marker)) || this.fallback;
    const mine = this.turns.filter((t) => t.marker === turn.marker);
    return scenario(turn, mine);
  };

  of(marker: string, role?: AgentRoleSeen): Turn[] {
    return this.turns.filter((t) => t.marker === marker && (!role || t.role === role));
  }
}

export const marker = (name: string) => `[[${name}]]`;

const MARKER = /\[\[([\w-]+)\]\]/g;

function lastMarker(messages: SeenMessage[]): string | undefined {
  let last: string | undefined;
  for (const message of messages) for (const match of message.content.matchAll(MARKER)) last = match[1];
  return last;
}

function seen(message: ScriptedRequest["messages"][number]): SeenMessage {
  const m = message as {
    role: string;
    content?: unknown;
    tool_call_id?: string;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  };
  return {
    role: m.role,
    content: textOf(m.content),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
    ...(m.tool_calls?.length
      ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) }
      : {}),
  };
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

function toolNames(request: ScriptedRequest, messages: SeenMessage[]): string[] {
  if (request.tools?.length) return request.tools.map((t) => (t.type === "function" ? t.function.name : t.custom.name));
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const at = system.lastIndexOf("\nTools:\n");
  if (at < 0) return [];
  return [...system.slice(at).matchAll(/^- ([\w-]+): /gm)].map((m) => m[1]!);
}

function roleOf(request: ScriptedRequest, messages: SeenMessage[]): AgentRoleSeen {
  const tools = toolNames(request, messages);
  if (tools.includes("choose_mode")) return "router";
  if (tools.includes("planning")) return "planner";
  // Executors and ReAct agents have the same tools (ask_user included): their prompts say which.
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  if (system.startsWith("You are an executor")) return "executor";
  if (tools.length) return "react";
  return "summarizer";
}

// --- Replies -------------------------------------------------------------------------------------

/** Native tool calling: a reply with tool calls (and optional text). */
export const callTools = (calls: { name: string; arguments: object; id?: string }[], text?: string): ScriptStep => ({
  toolCalls: calls,
  ...(text ? { text } : {}),
});
export const answer = (text: string): ScriptStep => ({ text });

/** JSON contract mode: the same moves, written as the contract's JSON. */
export const jsonCalls = (calls: { name: string; arguments: object }[]): ScriptStep => ({ text: [JSON.stringify({ tool_calls: calls })] });
export const jsonAnswer = (text: string): ScriptStep => ({ text: [JSON.stringify({ answer: text })] });

/** The last message, and the last message of a role. */
export const last = (turn: Turn) => turn.messages.at(-1)!;
export const lastOfRole = (turn: Turn, role: string) => turn.messages.findLast((m) => m.role === role);
