import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../support/localStack.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("GET /health while the local stack starts", () => {
  let stack: RunningStack | undefined;
  afterAll(() => stack?.stop());

  it("answers every request it accepts: 503 with Retry-After until ready, then 200 with the version", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const answers: { path: string; status: number; retryAfter: string | null; body: any }[] = [];
    let ready = false;
    const poll = (async () => {
      while (!ready) {
        for (const path of ["/health", "/v1/runs"]) {
          try {
            // A request that is accepted and never answered fails here (the signal), not silently.
            const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
            answers.push({ path, status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() });
          } catch (error) {
            if ((error as Error).name === "TimeoutError") throw new Error(`${path} was accepted and not answered`);
            // Not listening yet: connection refused.
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    stack = await startStack({ PORT: String(port) }).finally(() => (ready = true));
    await poll;

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", version: expect.any(String) });
    for (const answer of answers) {
      expect([200, 401, 503]).toContain(answer.status);
      if (answer.status === 503) {
        expect(answer.retryAfter).toBe("1");
        if (answer.path === "/health") expect(answer.body).toMatchObject({ status: "unavailable" });
        else expect(answer.body.error.code).toBe("starting");
      }
    }
    // Once ready, it stays ready: no 503 after the first 200.
    const firstOk = answers.findIndex((a) => a.path === "/health" && a.status === 200);
    if (firstOk >= 0) expect(answers.slice(firstOk).filter((a) => a.status === 503)).toEqual([]);
  }, 240_000);
});
