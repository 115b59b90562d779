import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveMcpOverHttp } from "./mcpHttp.js";

/**
 * A tiny MCP server for the README's walk-through, built with the official SDK:
 * `npx tsx infra/local/exampleMcpServer.ts` serves `add` and `echo` (read-only) and `save_note`
 * (a write: it needs approval under `approval.tools: "write"`) at http://127.0.0.1:3100/mcp.
 * MCP_PORT changes the port; MCP_TOKEN, when set, must come as `Authorization: Bearer <token>`.
 */
const notes: string[] = [];

function exampleServer(): McpServer {
  const server = new McpServer({ name: "everything", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "echo",
    { description: "Says the message back.", inputSchema: { message: z.string() }, annotations: { readOnlyHint: true } },
    async ({ message }) => ({ content: [{ type: "text", text: `Echo: ${message}` }] }),
  );
  server.registerTool(
    "save_note",
    { description: "Saves a note on the server.", inputSchema: { text: z.string().min(1) } },
    async ({ text }) => {
      notes.push(text);
      return { content: [{ type: "text", text: `Saved note #${notes.length}: ${text}` }] };
    },
  );
  return server;
}

const token = process.env.MCP_TOKEN;
const running = await serveMcpOverHttp(exampleServer, {
  port: Number(process.env.MCP_PORT ?? 3100),
  ...(token ? { requiredHeaders: { authorization: `Bearer ${token}` } } : {}),
});
console.log(`MCP server "everything" at ${running.url} (tools: add, echo, save_note)`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void running.close().then(() => process.exit(0)));
