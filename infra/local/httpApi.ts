import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

const TEXT_TYPES = /^\s*(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|x-www-form-urlencoded|javascript)\b)|^\s*$/i;

/**
 * A Node request's head (request line and headers) as API Gateway HTTP API (payload 2.0) and
 * Function URLs present it to Lambda; `withBody` adds the body once it has been read.
 */
export function requestHead(req: IncomingMessage): APIGatewayProxyEventV2 {
  // The request target is a path: "//x" must stay a path, not become a URL with host "x".
  const target = req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`;
  const url = URL.canParse(`http://localhost${target}`) ? new URL(`http://localhost${target}`) : new URL("http://localhost/");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const now = new Date();
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: "localhost",
      http: {
        method: req.method ?? "GET",
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
}

/** As API Gateway does: text-like bodies as text, anything else (uploads) base64-encoded. */
export function withBody(head: APIGatewayProxyEventV2, raw: Buffer): APIGatewayProxyEventV2 {
  const binary = raw.length > 0 && !TEXT_TYPES.test(head.headers["content-type"] ?? "");
  return { ...head, body: raw.toString(binary ? "base64" : "utf8") || undefined, isBase64Encoded: binary };
}

/**
 * The request's body, or undefined once it passes `limit` bytes: reading stops there (whatever
 * `Content-Length` said, and for chunked bodies that declare none), and the request is left paused.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= limit) return void chunks.push(chunk);
      req.off("data", onData).pause();
      chunks.length = 0;
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("close", () => (req.complete ? undefined : reject(new Error("The client closed the connection before the body's end."))));
  });
}

/** How long a refused client may go on sending before its connection is cut. */
const LINGER_MS = 2_000;

/**
 * An answer given before the body was read whole. What the client still sends is discarded as it
 * comes (kept nowhere), so it reads the answer before the connection goes: closing a socket with
 * unread bytes resets it, answer unread (web servers' "lingering close" avoids the same). A client
 * still sending LINGER_MS after the answer is cut off; one that stops keeps its connection.
 */
export function refuseBeforeBody(req: IncomingMessage, res: ServerResponse, result: APIGatewayProxyStructuredResultV2) {
  sendResult(res, result);
  if (req.complete) return;
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
  const stop = () => clearTimeout(timer);
  req.once("end", stop).once("close", stop).resume();
}

export function sendResult(res: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string | undefined) {
  const structured =
    typeof result === "object" && result !== null && "statusCode" in result
      ? result
      : { statusCode: 200, body: typeof result === "string" ? result : JSON.stringify(result ?? null) };
  const headers = { ...(structured.headers ?? {}) } as Record<string, string>;
  res.writeHead(structured.statusCode ?? 200, headers);
  res.end(structured.isBase64Encoded ? Buffer.from(structured.body ?? "", "base64") : (structured.body ?? ""));
}
