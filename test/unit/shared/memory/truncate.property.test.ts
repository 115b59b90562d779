import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../../shared/llm/types.js";
import { tokenCounterFor } from "../../../../shared/memory/tokens.js";
import { fitToBudget } from "../../../../shared/memory/truncate.js";

const counter = tokenCounterFor("gpt-4o");

// --- Generating valid conversations ---

type UnitSpec =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "tools"; results: string[]; reversed: boolean };

const text = fc.oneof(fc.lorem({ maxCount: 30 }), fc.string({ maxLength: 60 }));
const userSpec = text.map((t): UnitSpec => ({ kind: "user", text: t }));
const assistantSpec = text.map((t): UnitSpec => ({ kind: "assistant", text: t }));
// Results may come back in any order; the API only requires that they follow the call.
const toolsSpec = fc
  .record({ results: fc.array(text, { minLength: 1, maxLength: 3 }), reversed: fc.boolean() })
  .map((r): UnitSpec => ({ kind: "tools", ...r }));

const conversationSpec = fc.record({
  system: fc.array(text, { minLength: 0, maxLength: 2 }),
  history: fc.array(fc.oneof({ arbitrary: userSpec, weight: 2 }, assistantSpec, toolsSpec), { maxLength: 14 }),
  question: text,
  currentSteps: fc.array(fc.oneof(toolsSpec, assistantSpec), { maxLength: 3 }),
  budgetPercent: fc.integer({ min: 0, max: 120 }),
});

function materialize(units: UnitSpec[], nextId: () => string): ChatMessage[] {
  return units.flatMap((unit): ChatMessage[] => {
    if (unit.kind !== "tools") return [{ role: unit.kind, content: unit.text }];
    const ids = unit.results.map(() => nextId());
    const call: ChatMessage = {
      role: "assistant",
      content: null,
      tool_calls: ids.map((id, i) => ({
        id,
        type: "function",
        function: { name: `tool_${i}`, arguments: JSON.stringify({ input: unit.results[i] }) },
      })),
    };
    const results: ChatMessage[] = ids.map((id, i) => ({ role: "tool", tool_call_id: id, content: unit.results[i]! }));
    return [call, ...(unit.reversed ? results.reverse() : results)];
  });
}

const conversation = conversationSpec.map((spec) => {
  let id = 0;
  const nextId = () => `call_${++id}`;
  const system: ChatMessage[] = spec.system.map((content) => ({ role: "system", content }));
  const history = materialize(spec.history, nextId);
  const current = materialize([{ kind: "user", text: spec.question }, ...spec.currentSteps], nextId);
  const messages = [...system, ...history, ...current];
  const budget = Math.floor((counter.countMessages(messages) * spec.budgetPercent) / 100);
  return { system, history, current, messages, budget };
});

// --- Properties ---

interface Case {
  system: ChatMessage[];
  history: ChatMessage[];
  current: ChatMessage[];
  messages: ChatMessage[];
  budget: number;
  output: ChatMessage[];
}

const run = (check: (c: Case) => void) =>
  fc.assert(
    fc.property(conversation, (c) => check({ ...c, output: fitToBudget(c.messages, c.budget, counter) })),
    { numRuns: 300 },
  );

describe("fitToBudget (properties)", () => {
  it("returns a subsequence of the input (the same message objects, in order)", () => {
    run(({ messages, output }) => {
      let at = -1;
      for (const message of output) {
        at = messages.indexOf(message, at + 1);
        expect(at).toBeGreaterThanOrEqual(0);
      }
    });
  });

  it("keeps the system messages first and the current turn intact at the end", () => {
    run(({ system, current, output }) => {
      expect(output.slice(0, system.length)).toEqual(system);
      expect(output.slice(output.length - current.length)).toEqual(current);
      for (const [i, message] of output.slice(0, system.length).entries()) expect(message).toBe(system[i]);
      for (const [i, message] of output.slice(output.length - current.length).entries()) expect(message).toBe(current[i]);
    });
  });

  it("never separates tool calls from their results", () => {
    run(({ output }) => {
      const calledIds = output.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((call) => call.id) : []));
      const resultIds = output.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []));
      expect(new Set(resultIds)).toEqual(new Set(calledIds));
      expect(resultIds).toHaveLength(calledIds.length);
    });
  });

  it("starts the history after the system messages with a user message", () => {
    run(({ system, output }) => {
      expect(output[system.length]?.role).toBe("user");
    });
  });

  it("stays within the budget whenever the system messages and the current turn fit", () => {
    run(({ system, current, budget, output }) => {
      if (counter.countMessages([...system, ...current]) <= budget) expect(counter.countMessages(output)).toBeLessThanOrEqual(budget);
    });
  });

  it("keeps the newest history that fits: a contiguous suffix, and the next older user turn would not fit", () => {
    run(({ system, history, current, budget, output }) => {
      const kept = output.slice(system.length, output.length - current.length);
      const keptStart = kept.length ? history.indexOf(kept[0]!) : history.length;
      expect(kept).toEqual(history.slice(keptStart));
      const previousUser = history.slice(0, keptStart).findLastIndex((m) => m.role === "user");
      if (previousUser >= 0) {
        const extended = [...system, ...history.slice(previousUser), ...current];
        expect(counter.countMessages(extended)).toBeGreaterThan(budget);
      }
    });
  });

  it("returns everything when everything fits and the history starts with a user message", () => {
    run(({ messages, history, budget, output }) => {
      if (counter.countMessages(messages) <= budget && (history.length === 0 || history[0]!.role === "user"))
        expect(output).toEqual(messages);
    });
  });

  it("is deterministic", () => {
    run(({ messages, budget, output }) => {
      expect(fitToBudget(messages, budget, counter)).toEqual(output);
    });
  });

  it("gives the same answer uncounted, when the prompt's bytes fit, as counting every message does", () => {
    const countingOnly = { ...counter, atMost: () => Number.POSITIVE_INFINITY };
    run(({ messages }) => {
      const bytes = counter.atMost(messages);
      expect(bytes).toBeGreaterThanOrEqual(counter.countMessages(messages));
      for (const budget of [bytes, bytes + 100])
        expect(fitToBudget(messages, budget, counter)).toEqual(fitToBudget(messages, budget, countingOnly));
    });
  });
});

// --- Examples ---

const system: ChatMessage = { role: "system", content: "You are a helpful assistant." };
const user = (content: string): ChatMessage => ({ role: "user", content });
const assistant = (content: string): ChatMessage => ({ role: "assistant", content });
const call = (...ids: string[]): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "calculator", arguments: '{"expression":"1+1"}' } })),
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: "2" });
const UNLIMITED = 1_000_000;

describe("fitToBudget (examples)", () => {
  it("drops the oldest turns first", () => {
    const old = [user("first question ".repeat(20)), assistant("first answer ".repeat(20))];
    const recent = [user("second question"), assistant("second answer")];
    const current = [user("third question")];
    const budget = counter.countMessages([system, ...recent, ...current]);
    expect(fitToBudget([system, ...old, ...recent, ...current], budget, counter)).toEqual([system, ...recent, ...current]);
  });

  it("drops a tool call together with all its results", () => {
    const messages = [system, user("q1"), call("a", "b"), result("a"), result("b"), assistant("done"), user("q2")];
    const withoutCall = [system, user("q2")];
    const budget = counter.countMessages(messages) - 1;
    expect(fitToBudget(messages, budget, counter)).toEqual(withoutCall);
  });

  it("does not leave an answer without its question at the front", () => {
    const messages = [system, user("a long question ".repeat(30)), assistant("short answer"), user("next")];
    const budget = counter.countMessages([system, assistant("short answer"), user("next")]);
    expect(fitToBudget(messages, budget, counter)).toEqual([system, user("next")]);
  });

  it("leaves out orphan tool results and unanswered tool calls", () => {
    const messages = [system, result("ghost"), user("q1"), call("a", "b"), result("a"), assistant("x"), user("q2")];
    expect(fitToBudget(messages, UNLIMITED, counter)).toEqual([system, user("q1"), assistant("x"), user("q2")]);
  });

  it("keeps the current turn with its tool calls, even over the budget", () => {
    const messages = [system, user("old"), assistant("old answer"), user("now"), call("c1"), result("c1")];
    expect(fitToBudget(messages, 0, counter)).toEqual([system, user("now"), call("c1"), result("c1")]);
  });

  it("keeps developer messages at the start like system messages", () => {
    const developer: ChatMessage = { role: "developer", content: "Be brief." };
    expect(fitToBudget([developer, user("old"), assistant("a"), user("now")], 0, counter)).toEqual([developer, user("now")]);
  });

  it("returns the messages unchanged when there is no user message", () => {
    const messages = [system, assistant("hello")];
    expect(fitToBudget(messages, 0, counter)).toEqual(messages);
  });

  it("never skips a unit that does not fit to keep older ones (no holes)", () => {
    const messages = [system, user("q1"), assistant("a1"), user("huge ".repeat(500)), assistant("a2"), user("now")];
    const budget = counter.countMessages([system, user("q1"), assistant("a1"), assistant("a2"), user("now")]);
    expect(fitToBudget(messages, budget, counter)).toEqual([system, user("now")]);
  });
});
