import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a webhook endpoint received, and what it answered. */
export interface ReceivedRequest {
  /** 1 for the first request this endpoint received. */
  n: number;
  /** Date.now() when the request's body had arrived. */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, byte for byte as sent (signatures are over it). */
  body: string;
  /** The status this endpoint answered with. */
  answered: number;
}

/** What the endpoint answers. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * An endpoint's script: the reply to the n-th request (1-based). A list is played in order and its
 * last entry repeats.
 */
export type Script = Reply[] | ((n: number, request: Omit<ReceivedRequest, "answered">) => Reply);

/** Scripts for the usual receivers. */
export const scripts = {
  ok: (): Script => [{ status: 200, body: "ok" }],
  always: (status: number, headers: Record<string, string> = {}): Script => [{ status, headers, body: `HTTP ${status}` }],
  /** `failures` times `failure`, then 200 for ever. */
  failThenSucceed: (failures: number, failure: Reply): Script => [...Array<Reply>(failures).fill(failure), { status: 200, body: "ok" }],
};

/** One scripted endpoint on the receiver: its URL and every request it received. */
export class Endpoint {
  readonly requests: ReceivedRequest[] = [];
  private waiters: (() => void)[] = [];

  constructor(
    readonly url: string,
    readonly path: string,
    private readonly script: Script,
  ) {}

  /** @internal Called by the receiver's server. */
  answer(request: Omit<ReceivedRequest, "answered" | "n">): Reply {
    const n = this.requests.length + 1;
    const reply = typeof this.script === "function" ? this.script(n, { ...request, n }) : this.script[Math.min(n, this.script.length) - 1]!;
    this.requests.push({ ...request, n, answered: reply.status });
    for (const wake of this.waiters.splice(0)) wake();
    return reply;
  }

  /** The parsed JSON bodies received so far. */
  bodies(): any[] {
    return this.requests.map((r) => JSON.parse(r.body));
  }

  /** Resolves once `count` requests have arrived (with the first `count`); rejects after `timeoutMs`. */
  async waitForRequests(count: number, timeoutMs = 30_000): Promise<ReceivedRequest[]> {
    return this.waitUntil(() => this.requests.length >= count, `${count} request(s)`, timeoutMs).then(() => this.requests.slice(0, count));
  }

  /** Resolves with the first request the predicate accepts; rejects after `timeoutMs`. */
  async waitForRequest(predicate: (request: ReceivedRequest) => boolean, timeoutMs = 30_000): Promise<ReceivedRequest> {
    await this.waitUntil(() => this.requests.some(predicate), "a matching request", timeoutMs);
    return this.requests.find(predicate)!;
  }

  private async waitUntil(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.path}: waited ${timeoutMs} ms for ${what}, got ${this.requests.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/**
 * A webhook receiver on 127.0.0.1 for tests: each `endpoint(script)` gets its own path, answers per
 * its script and records every request. Unknown paths get 404 (and are recorded in `stray`).
 */
export class Receiver {
  readonly stray: Omit<ReceivedRequest, "n" | "answered">[] = [];
  private readonly endpoints = new Map<string, Endpoint>();
  private next = 0;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const path = (req.url ?? "/").split("?")[0]!;
      const request = {
        at: Date.now(),
        method: req.method ?? "",
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      const endpoint = receiver.endpoints.get(path);
      if (!endpoint) {
        receiver.stray.push(request);
        res.writeHead(404).end("no such endpoint");
        return;
      }
      const reply = endpoint.answer(request);
      res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers }).end(reply.body ?? "");
    });
    return receiver;
  }

  /** A new endpoint with its own URL and script. */
  endpoint(script: Script = scripts.ok(), name = "hook"): Endpoint {
    const path = `/${name}/${++this.next}`;
    const endpoint = new Endpoint(`${this.baseUrl}${path}`, path, script);
    this.endpoints.set(path, endpoint);
    return endpoint;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A loopback URL where nothing listens (the port was free a moment ago): every connection is refused. */
export async function closedPortUrl(path = "/hook"): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}
