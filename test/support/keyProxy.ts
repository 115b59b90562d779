import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP proxy in front of the local stack that adds the API key to every request: for clients
 * that cannot be told to send one (the MCP conformance suite's client).
 */
export async function startKeyProxy(target: string, apiKey: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forwarded = request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host, authorization: `Bearer ${apiKey}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
