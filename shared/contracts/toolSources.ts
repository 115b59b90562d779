import * as z from "zod";

/** A source's name: the prefix of its tools' names (`<source>__<tool>`). */
export const ToolSourceName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,30}$/, "a source name is a lowercase letter then up to 30 of a-z, 0-9, _ and -")
  // "__" separates the source from the tool: kept out of source names, the split is never ambiguous.
  .refine((name) => !name.includes("__") && !name.endsWith("_"), "a source name has no '__' and does not end with '_'");
export type ToolSourceName = z.infer<typeof ToolSourceName>;

export const ToolAccess = z.enum(["read", "write"]);
export type ToolAccess = z.infer<typeof ToolAccess>;

/** Headers the transport sets itself, or that would change what the request means. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);
const HeaderName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "a header name is an HTTP token")
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "this header is set by the MCP transport");
const HeaderValue = z
  .string()
  .max(8_192)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, "a header value is one line of visible characters");
const McpToolName = z.string().min(1).max(128);

/** POST /v1/tool-sources */
export const CreateToolSourceRequest = z.strictObject({
  name: ToolSourceName,
  url: z.string().min(1).max(2_048),
  /** Sent with every request to the server (e.g. Authorization). Secrets: stored encrypted, shown as "***". */
  headers: z
    .record(HeaderName, HeaderValue)
    .refine((h) => Object.keys(h).length <= 20, "at most 20 headers")
    .optional(),
  /** Only these tools of the server (by their own names); all when absent. */
  tools: z.array(McpToolName).min(1).max(200).optional(),
  /** Access per tool (own names), over the server's readOnlyHint; MCP tools are write otherwise. */
  access: z
    .record(McpToolName, ToolAccess)
    .refine((a) => Object.keys(a).length <= 200, "at most 200 entries")
    .optional(),
});
export type CreateToolSourceRequest = z.infer<typeof CreateToolSourceRequest>;

/** One tool of a source, as discovered. */
export const SourceToolInfo = z.object({ name: z.string(), tool: z.string(), description: z.string(), access: ToolAccess });
export type SourceToolInfo = z.infer<typeof SourceToolInfo>;

/** AES-256-GCM under a data key that KMS encrypted (envelope encryption). */
export const SealedSecret = z.object({
  keyId: z.string(),
  encryptedKey: z.string(),
  iv: z.string(),
  tag: z.string(),
  ciphertext: z.string(),
});
export type SealedSecret = z.infer<typeof SealedSecret>;

/** What is stored (`TENANT#t` / `TOOLSRC#name`); header values only sealed. */
export const ToolSourceRecord = z.object({
  schemaVersion: z.literal(1),
  tenantId: z.string(),
  name: ToolSourceName,
  url: z.string(),
  headerNames: z.array(z.string()),
  sealedHeaders: SealedSecret.optional(),
  tools: z.array(z.string()).optional(),
  access: z.record(z.string(), ToolAccess).optional(),
  /** The tools found at registration. */
  discovered: z.array(SourceToolInfo),
  createdAt: z.string(),
});
export type ToolSourceRecord = z.infer<typeof ToolSourceRecord>;

/** What the API shows: headers by name only, values masked. */
export function toolSourceView(source: ToolSourceRecord) {
  return {
    name: source.name,
    url: source.url,
    headers: Object.fromEntries(source.headerNames.map((name) => [name, "***"])),
    ...(source.tools ? { allowedTools: source.tools } : {}),
    ...(source.access ? { access: source.access } : {}),
    tools: source.discovered,
    createdAt: source.createdAt,
  };
}
