import * as z from "zod";
import type { ToolAccess } from "../../contracts/toolSources.js";
import { clip } from "../../memory/share.js";
import { FixableToolError, fixableStatus, type Tool, type ToolContext, type ToolReply, unreachable } from "../../ports/tools.js";
import { callMcpTool, type McpEndpoint, type McpNetworkPolicy, type McpToolDefinition, mcpStatusOf, withMcp } from "./client.js";
import { type MappedResult, mapCallResult } from "./results.js";

/** ajv (through the MCP SDK) loads with the first MCP tool: the agents of a tenant with no tool source never need it. */
let validators: Promise<import("@modelcontextprotocol/sdk/validation/ajv").AjvJsonSchemaValidator> | undefined;
const jsonSchemaValidators = () =>
  (validators ??= import("@modelcontextprotocol/sdk/validation/ajv").then(({ AjvJsonSchemaValidator }) => new AjvJsonSchemaValidator()));
const MAX_DESCRIPTION = 1_024;

export interface McpSourceRuntime {
  /** The source's name (the tools' prefix). */
  name: string;
  endpoint: McpEndpoint;
  policy: McpNetworkPolicy;
  /** Per call: connecting and the call together. */
  callTimeoutMs: number;
  /** Access per tool (own names), over the server's annotations. */
  access?: Record<string, ToolAccess>;
  /** Secrets to mask in anything a tool returns or reports. */
  redact: (text: string) => string;
}

/** MCP tools change things unless the source or the server (readOnlyHint) says they only read. */
export function accessOf(definition: McpToolDefinition, overrides: Record<string, ToolAccess> | undefined): ToolAccess {
  return overrides?.[definition.name] ?? (definition.annotations?.readOnlyHint === true ? "read" : "write");
}

/**
 * One MCP tool as an agent's tool, named `exposedName`. Arguments are validated against the
 * tool's own JSON schema (for the model's calls and for a person's edit alike); each call opens a
 * session, calls tools/call with the call's idempotency key in `_meta`, and closes it.
 */
export async function mcpTool(
  definition: McpToolDefinition,
  exposedName: string,
  source: McpSourceRuntime,
): Promise<Tool<Record<string, unknown>>> {
  const inputSchema = { ...definition.inputSchema } as Record<string, unknown>;
  return {
    name: exposedName,
    description: clip(definition.description ?? definition.title ?? definition.name, MAX_DESCRIPTION),
    access: accessOf(definition, source.access),
    // The server says a second call with the same arguments changes nothing more (MCP's idempotentHint).
    idempotent: definition.annotations?.idempotentHint === true,
    source: source.name,
    inputSchema,
    parameters: await jsonSchemaParameters(inputSchema),
    async run(args: Record<string, unknown>, context: ToolContext): Promise<string | ToolReply> {
      const signal = context.signal
        ? AbortSignal.any([context.signal, AbortSignal.timeout(source.callTimeoutMs)])
        : AbortSignal.timeout(source.callTimeoutMs);
      let outcome: MappedResult;
      try {
        outcome = await withMcp(source.endpoint, source.policy, source.callTimeoutMs, async (client) => {
          const result = await callMcpTool(client, definition.name, args, {
            timeoutMs: source.callTimeoutMs,
            signal,
            idempotencyKey: context.idempotencyKey,
          });
          return mapCallResult(result, {
            runId: context.runId,
            files: context.files,
            toolName: exposedName,
            idempotencyKey: context.idempotencyKey,
          });
        });
      } catch (error) {
        if (signal.aborted && !context.signal?.aborted)
          throw new Error(`no answer within ${source.callTimeoutMs} ms (the per-call timeout)`);
        const message = source.redact(error instanceof Error ? error.message : String(error));
        // A refused key or grant, a quota, a server down: for a person to fix, then the call runs again.
        const fixable = fixableStatus(mcpStatusOf(error)) ?? unreachable(error);
        throw fixable ? new FixableToolError(message, fixable) : new Error(message);
      }
      // isError: the tool ran and failed; the model sees why (as an error text) and may adapt.
      if (outcome.isError) throw new Error(`the tool reported an error: ${source.redact(outcome.text) || "(no details)"}`);
      const output = source.redact(outcome.text);
      return outcome.images.length ? { output, images: outcome.images } : output;
    },
  };
}

/** A zod schema that checks a value against a JSON schema (ajv), so edits are validated like calls. */
async function jsonSchemaParameters(schema: Record<string, unknown>): Promise<z.ZodType<Record<string, unknown>>> {
  const validators = await jsonSchemaValidators();
  let validate: ((input: unknown) => { valid: boolean; errorMessage?: string }) | undefined;
  try {
    validate = validators.getValidator(schema as never);
  } catch {
    validate = undefined; // a schema ajv cannot compile: the server checks the arguments itself
  }
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const result = validate?.(value);
    if (result && !result.valid) ctx.addIssue({ code: "custom", message: result.errorMessage ?? "does not match the tool's input schema" });
  });
}
