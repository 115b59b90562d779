import * as z from "zod";
import type { ToolCall, ToolSpec } from "../llm/types.js";
import type { Tool, ToolContext, ToolOutcome, ToolSet } from "../ports/tools.js";
import { wordsOf } from "../text/words.js";
import { ToolRegistry } from "./registry.js";
import { defineTool } from "./tool.js";

/**
 * Catalogues larger than a request can carry: providers refuse a request with too many tools
 * (OpenAI: 128), so past the cap an agent is offered its built-ins, `find_tools`, and the tools it
 * found. find_tools ranks the rest by what they do (name and description, word by word) and loads
 * the best ones for the agent's following rounds. What it loaded travels in its journaled outcome
 * (`loads`), so a replayed turn offers the same tools again.
 */

export const FIND_TOOLS = "find_tools";

const MAX_RESULTS = 20;

const findToolsArguments = z.object({
  query: z.string().min(1).max(500).describe("What the tool should do, in a few words, or its name."),
  limit: z.number().int().min(1).max(MAX_RESULTS).optional().describe("How many tools to load (default 5)."),
});

/** The search itself runs in SearchableTools.execute: it needs the agent's catalogue, which a tool does not see. */
const findTools = defineTool({
  name: FIND_TOOLS,
  persona: "Librarian",
  description:
    "Find tools by what they do among the tools not offered yet, and make the best matches callable from your next reply. Use it when no offered tool fits.",
  access: "read",
  parameters: findToolsArguments,
  async run() {
    throw new Error("find_tools runs only inside an agent's tool set");
  },
});

/** The tools an agent is offered: all of them when they fit under the cap, else the searchable view. */
export function withToolSearch(tools: ToolSet, cap: number): ToolSet {
  if (tools instanceof SearchableTools || tools.names.length <= cap) return tools;
  return new SearchableTools(tools, cap);
}

/**
 * One agent's view of a catalogue over the cap: the built-ins (tools of no source) and find_tools
 * always, then the tools find_tools loaded, oldest dropped first when they would pass the cap.
 * Every catalogue tool stays callable by name (a call names what it needs; only the offer is capped).
 */
class SearchableTools implements ToolSet {
  private readonly always: Tool[];
  private readonly index: ToolIndex;
  private readonly loaded: string[] = [];
  private readonly own = new ToolRegistry([findTools]);

  constructor(
    private readonly all: ToolSet,
    private readonly cap: number,
  ) {
    const builtins = all.tools.filter((tool) => !tool.source && tool.name !== FIND_TOOLS).slice(0, cap - 1);
    this.always = [...builtins, findTools];
    const offeredAlways = new Set(this.always.map((tool) => tool.name));
    this.index = new ToolIndex(all.tools.filter((tool) => !offeredAlways.has(tool.name)));
  }

  get names(): string[] {
    return this.tools.map((tool) => tool.name);
  }

  get tools(): Tool[] {
    return [...this.always, ...this.all.tools.filter((tool) => !this.always.includes(tool))];
  }

  /** What a prompt lists: the tools always offered, and how many more find_tools reaches. */
  get listed(): { tools: Tool[]; searchable: number } {
    return { tools: this.always, searchable: this.index.size };
  }

  get(name: string): Tool | undefined {
    return name === FIND_TOOLS ? findTools : this.all.get(name);
  }

  schemaOf(tool: Tool): Record<string, unknown> {
    return tool === findTools ? this.own.schemaOf(tool) : this.all.schemaOf(tool);
  }

  specs(): ToolSpec[] {
    const offered = new Set([...this.always.map((tool) => tool.name), ...this.loaded]);
    return [...this.all.specs().filter((spec) => spec.type === "function" && offered.has(spec.function.name)), ...this.own.specs()];
  }

  /** Offers these tools from the next request on (find_tools' `loads`, also when replayed). */
  load(names: readonly string[]): void {
    for (const name of names) {
      const at = this.loaded.indexOf(name);
      if (at >= 0) this.loaded.splice(at, 1);
      if (this.all.get(name)) this.loaded.push(name);
    }
    const room = this.cap - this.always.length;
    if (this.loaded.length > room) this.loaded.splice(0, this.loaded.length - room);
  }

  async execute(call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
    if (call.name !== FIND_TOOLS) return this.all.execute(call, context);
    let raw: unknown;
    try {
      raw = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      return this.own.execute(call, context); // the registry words the error
    }
    const args = findToolsArguments.safeParse(raw);
    if (!args.success) return this.own.execute(call, context);
    const found = this.index.search(args.data.query, args.data.limit ?? 5);
    if (found.length === 0) {
      return {
        ok: true,
        output: `No tool matches "${args.data.query}" among the ${this.index.size} tools not offered yet. Try other words for what the tool should do.`,
      };
    }
    const room = this.cap - this.always.length;
    const lines = found.map((tool) => `- ${tool.name} (${tool.access}): ${tool.description.trim().split(/\r?\n/)[0]}`);
    return {
      ok: true,
      output: [
        `Loaded ${found.length} tools for "${args.data.query}"; call them from your next reply:`,
        ...lines,
        `(At most ${room} found tools are offered at once; the oldest loaded are dropped first.)`,
      ].join("\n"),
      loads: found.map((tool) => tool.name),
    };
  }
}

/**
 * Ranks tools by the words of a query, BM25's inverse document frequency over words of the name
 * and the description (words in any script, text/words.ts; names split at `_`, `-` and case).
 * A word of the name counts twice; the whole name in the query ranks that tool first.
 */
export class ToolIndex {
  private readonly entries: { tool: Tool; name: Set<string>; text: Set<string> }[];
  private readonly documentFrequency = new Map<string, number>();

  constructor(tools: readonly Tool[]) {
    this.entries = tools.map((tool) => ({
      tool,
      name: new Set(termsOf(splitName(tool.name))),
      text: new Set(termsOf(tool.description)),
    }));
    for (const entry of this.entries) {
      for (const word of new Set([...entry.name, ...entry.text]))
        this.documentFrequency.set(word, (this.documentFrequency.get(word) ?? 0) + 1);
    }
  }

  get size(): number {
    return this.entries.length;
  }

  search(query: string, limit: number): Tool[] {
    const terms = [...new Set(termsOf(splitName(query)))];
    const exact = new Set(query.toLowerCase().match(/[\w-]+/g) ?? []);
    const scored = this.entries.map((entry, order) => {
      let score = exact.has(entry.tool.name.toLowerCase()) ? 1_000 : 0;
      for (const term of terms) {
        const weight = this.idf(term);
        if (matches(entry.name, term)) score += 2 * weight;
        else if (matches(entry.text, term)) score += weight;
      }
      return { tool: entry.tool, score, order };
    });
    return scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .slice(0, limit)
      .map((s) => s.tool);
  }

  private idf(term: string): number {
    const n = this.entries.length;
    let df = this.documentFrequency.get(term) ?? 0;
    if (df === 0) for (const [word, count] of this.documentFrequency) if (sameStem(word, term)) df = Math.max(df, count);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }
}

/** Words that say nothing about what a tool does. */
const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "the",
  "to",
  "of",
  "or",
  "for",
  "in",
  "on",
  "with",
  "by",
  "is",
  "it",
  "use",
  "tool",
  "tools",
]);

/** A text's words (Unicode word boundaries, lowercase), less the stop words. */
function termsOf(text: string): string[] {
  return wordsOf(text)
    .map((word) => word.text)
    .filter((word) => !STOP_WORDS.has(word));
}

/** `weather__getForecast` → "weather get Forecast": a name's parts as words. */
function splitName(name: string): string {
  return name.replace(/[_\-.]+/g, " ").replace(/([a-z\d])([A-Z])/g, "$1 $2");
}

function matches(words: Set<string>, term: string): boolean {
  if (words.has(term)) return true;
  for (const word of words) if (sameStem(word, term)) return true;
  return false;
}

/** "convert" and "converts", "currency" and "currencies": one is the other's start, four letters or more. */
function sameStem(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  const stem = short.length > 4 ? short.slice(0, -1) : short;
  return stem.length >= 4 && long.startsWith(stem);
}
