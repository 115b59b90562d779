import * as z from "zod";
import { errorMessage } from "../errors.js";
import type { ToolCall, ToolSpec } from "../llm/types.js";
import { clip } from "../memory/share.js";
import { FixableToolError, type Tool, type ToolContext, type ToolOutcome, type ToolSet } from "../ports/tools.js";
import { PERSONA_ARGUMENT, withoutPersona, withPersonaProperty } from "./persona.js";

/** JD Genie's max_observe: what the model sees of one tool output. */
export const MAX_OBSERVE_CHARS = 10_000;

const derivedSchemas = new WeakMap<object, Record<string, unknown>>();

/**
 * The tools one agent may use. Bad arguments and tool failures become error text for the model
 * (which can correct itself), never a crash of the run.
 */
export class ToolRegistry implements ToolSet {
  private readonly byName: Map<string, Tool>;

  constructor(tools: Tool[]) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  /** The tool's own JSON schema: as its source gave it (MCP), or derived from its zod schema. */
  schemaOf(tool: Tool): Record<string, unknown> {
    if (tool.inputSchema) return tool.inputSchema;
    // Derived once per zod schema for the container's life: every agent's registry shares the built-ins.
    let schema = derivedSchemas.get(tool.parameters);
    if (!schema) {
      schema = z.toJSONSchema(tool.parameters, { target: "draft-7", io: "input" }) as Record<string, unknown>;
      derivedSchemas.set(tool.parameters, schema);
    }
    return schema;
  }

  /** Whether `persona` is the tool's own argument (then it is passed on, not stripped). */
  private ownsPersona(tool: Tool): boolean {
    const properties = this.schemaOf(tool).properties;
    return typeof properties === "object" && properties !== null && PERSONA_ARGUMENT in properties;
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get tools(): Tool[] {
    return [...this.byName.values()];
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  specs(): ToolSpec[] {
    return [...this.byName.values()].map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        description: tool.description,
        // Every tool takes an optional persona (who makes the call); it never reaches the tool.
        parameters: withPersonaProperty(this.schemaOf(tool)),
      },
    }));
  }

  async execute(call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.byName.get(call.name);
    if (!tool) return { ok: false, output: `Error: there is no tool named '${call.name}'. Tools: ${this.names.join(", ")}.` };
    let raw: unknown;
    try {
      raw = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      return { ok: false, output: `Error: the arguments of ${call.name} are not valid JSON: ${clip(call.arguments, 300)}` };
    }
    const args = tool.parameters.safeParse(this.ownsPersona(tool) ? raw : withoutPersona(raw));
    if (!args.success) {
      const problems = args.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
      return { ok: false, output: `Error: invalid arguments for ${call.name}: ${problems}` };
    }
    try {
      const reply = await tool.run(args.data, context);
      if (typeof reply === "string") return { ok: true, output: reply };
      return { ok: true, output: reply.output, ...(reply.images?.length ? { images: reply.images } : {}) };
    } catch (error) {
      const output = `Error: ${call.name} failed: ${errorMessage(error)}`;
      if (error instanceof FixableToolError) return { ok: false, output, fixable: { reason: error.reason, status: error.status } };
      return { ok: false, output };
    }
  }
}
