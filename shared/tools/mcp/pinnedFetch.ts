import { Readable } from "node:stream";
import { requestFor } from "../../net/httpRequest.js";
import { pinnedLookup, type ResolvedAddress } from "../../net/ssrfGuard.js";

/**
 * A fetch that connects only to the addresses the SSRF guard vetted (no second DNS lookup a
 * rebinding attacker could answer differently), for the MCP SDK's transports. Bodies stream, so
 * Server-Sent Events answers work; redirects are returned as they are, never followed here.
 */
export function pinnedFetch(addresses: readonly ResolvedAddress[]) {
  const lookup = pinnedLookup(addresses);
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input));
    const request = requestFor(url);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = typeof init.body === "string" ? init.body : init.body == null ? undefined : String(init.body);
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method: init.method ?? "GET", headers, lookup, signal: init.signal ?? undefined }, (res) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, one);
        }
        const status = res.statusCode ?? 502;
        const noBody = status === 204 || status === 304 || init.method === "HEAD";
        resolve(new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream), { status, headers: responseHeaders }));
      });
      req.on("error", reject);
      req.end(body);
    });
  };
}
