import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { invokeLambda } from "./lambda.js";
import { type LocalCredentials, refuseUnsigned } from "./sigv4.mjs";

/**
 * The Lambda Invoke API on loopback (`POST /2015-03-31/functions/{name}/invocations`), for
 * functions that other functions call directly (the code sandbox): the same handler, invoked
 * in-process, with Lambda's answer shape — a handler error is a 200 with X-Amz-Function-Error —
 * for callers that sign with the stack's credentials.
 */
export class LocalLambdaApi {
  private server?: Server;

  constructor(
    private readonly functions: Record<string, string>,
    private readonly credentials: LocalCredentials,
  ) {}

  async listen(): Promise<string> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (await refuseUnsigned(req, Buffer.concat(chunks), this.credentials, res, "application/json")) return;
      const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(new URL(req.url ?? "/", "http://localhost").pathname);
      const name = match ? decodeURIComponent(match[1]).split(":").at(-1) : undefined;
      const entry = name ? this.functions[name] : undefined;
      if (req.method !== "POST" || !entry) {
        res.writeHead(404, { "content-type": "application/json", "x-amzn-errortype": "ResourceNotFoundException" });
        return void res.end(JSON.stringify({ Type: "User", message: `Function not found: ${name ?? req.url}` }));
      }
      let event: unknown;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
      } catch {
        res.writeHead(400, { "content-type": "application/json", "x-amzn-errortype": "InvalidRequestContentException" });
        return void res.end(JSON.stringify({ Type: "User", message: "Could not parse request body into json" }));
      }
      try {
        const result = await invokeLambda(entry, event);
        res.writeHead(200, { "content-type": "application/json", "x-amz-executed-version": "$LATEST" });
        res.end(JSON.stringify(result));
      } catch (error) {
        // invokeLambda's message is Lambda's error JSON ({errorType, errorMessage, trace}).
        res.writeHead(200, {
          "content-type": "application/json",
          "x-amz-function-error": "Unhandled",
          "x-amz-executed-version": "$LATEST",
        });
        res.end((error as Error).message);
      }
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
