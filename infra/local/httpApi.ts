import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

const TEXT_TYPES = /^\s*(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|x-www-form-urlencoded|javascript)\b)|^\s*$/i;

/** A Node request as API Gateway HTTP API (payload 2.0) and Function URLs present it to Lambda. */
export async function toApiGatewayEvent(req: IncomingMessage): Promise<APIGatewayProxyEventV2> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  // The request target is a path: "//x" must stay a path, not become a URL with host "x".
  const target = req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`;
  const url = URL.canParse(`http://localhost${target}`) ? new URL(`http://localhost${target}`) : new URL("http://localhost/");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  // As API Gateway does: text-like bodies as text, anything else (uploads) base64-encoded.
  const raw = Buffer.concat(chunks);
  const binary = raw.length > 0 && !TEXT_TYPES.test(headers["content-type"] ?? "");
  const body = raw.toString(binary ? "base64" : "utf8");
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
    body: body || undefined,
    isBase64Encoded: binary,
  };
}

export function sendResult(res: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string | undefined) {
  const structured = typeof result === "object" && result !== null && "statusCode" in result ? result : { statusCode: 200, body: typeof result === "string" ? result : JSON.stringify(result ?? null) };
  const headers = { ...(structured.headers ?? {}) } as Record<string, string>;
  res.writeHead(structured.statusCode ?? 200, headers);
  res.end(structured.isBase64Encoded ? Buffer.from(structured.body ?? "", "base64") : (structured.body ?? ""));
}
