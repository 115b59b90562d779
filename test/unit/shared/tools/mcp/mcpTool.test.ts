import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../../../../infra/local/mcpHttp.js";
import { MemoryFileStore } from "../../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../../shared/testing/toolContext.js";
import { callMcpTool, listMcpTools, withMcp } from "../../../../../shared/tools/mcp/client.js";
import { accessOf, mcpTool } from "../../../../../shared/tools/mcp/mcpTool.js";
import { redactor } from "../../../../../shared/tools/mcp/redact.js";
import { mapCallResult } from "../../../../../shared/tools/mcp/results.js";
import { ToolRegistry } from "../../../../../shared/tools/registry.js";

const policy = { allowLoopback: true, allowHttp: true };
/** What the server's `record` tool received, by call. */
const received: { args: unknown; meta: unknown }[] = [];
let server: McpHttpServer;

beforeAll(async () => {
  server = await serveMcpOverHttp(() => {
    const mcp = new McpServer({ name: "unit", version: "1.0.0" });
    mcp.registerTool(
      "record",
      { description: "Records its arguments.", inputSchema: z.object({ n: z.number().int().min(1) }).strict() },
      async (args, extra) => {
        received.push({ args, meta: extra._meta });
        return { content: [{ type: "text", text: `got ${args.n}` }], structuredContent: { n: args.n } };
      },
    );
    return mcp;
  });
});
afterAll(() => server?.close());

async function recordTool() {
  const [definition] = await withMcp({ url: server.url, headers: {} }, policy, 5_000, (client) => listMcpTools(client, 5_000));
  return mcpTool(definition!, "unit__record", {
    name: "unit",
    endpoint: { url: server.url, headers: {} },
    policy,
    callTimeoutMs: 5_000,
    redact: (t) => t,
  });
}

describe("an MCP tool's failures a person can fix", () => {
  /** The record tool pointed at `url` (what its server answers is the test's). */
  async function recordToolAt(url: string) {
    const [definition] = await withMcp({ url: server.url, headers: {} }, policy, 5_000, (client) => listMcpTools(client, 5_000));
    return new ToolRegistry([
      await mcpTool(definition!, "unit__record", {
        name: "unit",
        endpoint: { url, headers: {} },
        policy,
        callTimeoutMs: 5_000,
        redact: (t) => t,
      }),
    ]);
  }
  const call = { id: "c1", name: "unit__record", arguments: '{"n": 1}' };

  it.each([
    [401, "unauthorized"],
    [403, "forbidden"],
    [429, "rate_limited"],
    [503, "unavailable"],
  ])("a tools/call answered %d is fixable (%s), with its status", async (status, reason) => {
    const refusing = await serveMcpOverHttp(
      () => {
        const mcp = new McpServer({ name: "unit", version: "1.0.0" });
        mcp.registerTool("record", { description: "Records.", inputSchema: { n: z.number() } }, async () => ({ content: [] }));
        return mcp;
      },
      { refuse: ({ method }) => (method === "tools/call" ? status : undefined) },
    );
    try {
      const outcome = await (await recordToolAt(refusing.url)).execute(call, testToolContext());
      expect(outcome).toMatchObject({ ok: false, fixable: { reason, status }, output: expect.stringContaining(String(status)) });
    } finally {
      await refusing.close();
    }
  });

  it("a server that refuses connections is unavailable; arguments the tool refuses are not fixable", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await (await recordToolAt(`http://127.0.0.1:${port}/mcp`)).execute(call, testToolContext());
    expect(down).toMatchObject({ ok: false, fixable: { reason: "unavailable" } });
    const invalid = await (await recordToolAt(server.url)).execute({ ...call, arguments: '{"n": 0}' }, testToolContext());
    expect(invalid.fixable).toBeUndefined();
  });

  it("is idempotent only when the server says so (idempotentHint)", async () => {
    const [definition] = await withMcp({ url: server.url, headers: {} }, policy, 5_000, (client) => listMcpTools(client, 5_000));
    const source = { name: "unit", endpoint: { url: server.url, headers: {} }, policy, callTimeoutMs: 5_000, redact: (t: string) => t };
    expect((await mcpTool(definition!, "a", source)).idempotent).toBe(false);
    expect((await mcpTool({ ...definition!, annotations: { idempotentHint: true } }, "b", source)).idempotent).toBe(true);
  });
});

describe("an MCP tool in a registry", () => {
  it("is offered with the server's JSON schema plus the optional persona, which never reaches the server", async () => {
    const registry = new ToolRegistry([await recordTool()]);
    const parameters = (registry.specs()[0] as any).function.parameters;
    expect(parameters.properties.n).toMatchObject({ type: "integer", minimum: 1 });
    expect(parameters.properties.persona).toMatchObject({ type: "string" });
    expect(parameters.additionalProperties).toBe(false);

    const outcome = await registry.execute(
      { id: "c1", name: "unit__record", arguments: '{"n": 3, "persona": "Archivist"}' },
      testToolContext({ idempotencyKey: "run:scope:0:c1" }),
    );
    expect(outcome).toEqual({ ok: true, output: 'got 3\n{"n":3}' });
    expect(received.at(-1)).toEqual({ args: { n: 3 }, meta: { idempotencyKey: "run:scope:0:c1" } });
  });

  it("checks arguments against the JSON schema before calling (the model's and a person's edit alike)", async () => {
    const tool = await recordTool();
    const before = received.length;
    expect(tool.parameters.safeParse({ n: 0 }).success).toBe(false);
    expect(tool.parameters.safeParse({ n: "3" }).success).toBe(false);
    expect(tool.parameters.safeParse({ n: 2 }).success).toBe(true);
    const outcome = await new ToolRegistry([tool]).execute({ id: "c2", name: "unit__record", arguments: '{"n": 0}' }, testToolContext());
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^Error: invalid arguments for unit__record/);
    expect(received.length).toBe(before);
  });

  it("is write unless the server says readOnlyHint or the source overrides it", () => {
    const definition = { name: "t", inputSchema: { type: "object" as const } };
    expect(accessOf(definition, undefined)).toBe("write");
    expect(accessOf({ ...definition, annotations: { readOnlyHint: true } }, undefined)).toBe("read");
    expect(accessOf({ ...definition, annotations: { readOnlyHint: true } }, { t: "write" })).toBe("write");
    expect(accessOf(definition, { t: "read" })).toBe("read");
  });
});

describe("transports", () => {
  it("falls back to HTTP+SSE for a server of the older protocol (its endpoint refuses the POST)", async () => {
    const sessions = new Map<string, SSEServerTransport>();
    const legacy = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname === "/sse" && req.method === "GET") {
        const transport = new SSEServerTransport("/messages", res);
        sessions.set(transport.sessionId, transport);
        const mcp = new McpServer({ name: "legacy", version: "1.0.0" });
        mcp.registerTool("hello", { description: "Greets.", inputSchema: {} }, async () => ({
          content: [{ type: "text", text: "hello from SSE" }],
        }));
        await mcp.connect(transport);
      } else if (url.pathname === "/messages" && req.method === "POST") {
        await sessions.get(url.searchParams.get("sessionId") ?? "")?.handlePostMessage(req, res);
      } else {
        res.writeHead(405).end();
      }
    });
    await new Promise<void>((resolve) => legacy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/sse`;
      const result = await withMcp({ url, headers: {} }, policy, 5_000, async (client) => ({
        tools: (await listMcpTools(client, 5_000)).map((t) => t.name),
        call: await callMcpTool(client, "hello", {}, { timeoutMs: 5_000, idempotencyKey: "k" }),
      }));
      expect(result).toEqual({ tools: ["hello"], call: { content: [{ type: "text", text: "hello from SSE" }] } });
    } finally {
      legacy.closeAllConnections();
      await new Promise((resolve) => legacy.close(resolve));
    }
  });

  it("refuses addresses the SSRF guard forbids before connecting", async () => {
    await expect(withMcp({ url: "http://169.254.169.254/mcp", headers: {} }, policy, 1_000, async () => "connected")).rejects.toThrow(
      /cloud metadata/,
    );
    await expect(
      withMcp({ url: server.url, headers: {} }, { allowLoopback: false, allowHttp: true }, 1_000, async () => "connected"),
    ).rejects.toThrow(/loopback/);
  });
});

describe("mapCallResult", () => {
  const target = () => ({ runId: "run_1", files: new MemoryFileStore(), toolName: "src__tool", idempotencyKey: "run_1:s:0:c" });

  it("joins text, keeps images and embedded resources as files of the run, names links", async () => {
    const t = target();
    const mapped = await mapCallResult(
      {
        content: [
          { type: "text", text: "first" },
          { type: "image", data: Buffer.from("PNGDATA").toString("base64"), mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" } },
          { type: "resource_link", uri: "https://example.com/a", name: "a" },
          { type: "text", text: "last" },
        ],
      },
      t,
    );
    expect(mapped.isError).toBe(false);
    const files = await t.files.list("run_1");
    // The image is named for a model that sees images; the Markdown resource is not an image.
    expect(mapped.images).toEqual([files[0]!.name]);
    expect(files.map((f) => [f.contentType, f.bytes])).toEqual([
      ["image/png", 7],
      ["text/markdown", 7],
    ]);
    expect(mapped.text.split("\n")).toEqual([
      "first",
      `[Image saved as file ${files[0]!.name} (image/png, 7 bytes)]`,
      `[Resource file:///notes.md saved as file ${files[1]!.name} (text/markdown, 7 bytes)]`,
      "[Resource a: https://example.com/a]",
      "last",
    ]);
  });

  it("passes isError on and cuts text over the limit", async () => {
    expect(await mapCallResult({ isError: true, content: [{ type: "text", text: "boom" }] }, target())).toEqual({
      isError: true,
      text: "boom",
      images: [],
    });
    const long = await mapCallResult({ content: [{ type: "text", text: "x".repeat(400_000) }] }, target());
    expect(long.text.length).toBeLessThan(301_000);
    expect(long.text).toMatch(/\[cut at 300000 bytes\]$/);
  });

  it("counts the limit in UTF-8 bytes: 150,000 Chinese characters (450,000 bytes) keep 100,000, no character cut", async () => {
    const long = await mapCallResult({ content: [{ type: "text", text: "数".repeat(150_000) }] }, target());
    expect(long.text).toBe(`${"数".repeat(100_000)}\n[cut at 300000 bytes]`);
  });
});

describe("redactor", () => {
  it("masks header values and the token inside a scheme, longest first", () => {
    const redact = redactor(["Bearer abcdefgh12345", "k"]);
    expect(redact("sent Bearer abcdefgh12345 and abcdefgh12345")).toBe("sent *** and ***");
    expect(redact("k stays: too short to mask")).toBe("k stays: too short to mask");
  });
});
