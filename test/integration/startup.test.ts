import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { START_NODE_FLAGS } from "../support/localStack.js";

/** What a person sees in the terminal of `npm start`: the banner, a line per request and run, the stop. */
describe("npm start in a terminal", () => {
  const started: ChildProcess[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const child of started.splice(0)) {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  function start(env: Record<string, string>) {
    const child = spawn(process.execPath, [...START_NODE_FLAGS, "infra/local/main.ts"], {
      detached: true,
      env: {
        ...process.env,
        PORT: "0",
        STEPWISE_DATA_DIR: "memory",
        STEPWISE_API_KEY: "sk_test_startup",
        OPENAI_API_KEY: "",
        OPENAI_BASE_URL: "",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.push(child);
    let out = "";
    child.stdout!.on("data", (chunk) => (out += chunk));
    child.stderr!.on("data", (chunk) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 1200 && !pattern.test(out); i++) {
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(out).toMatch(pattern);
      return out;
    };
    return { child, output: () => out, exited, waitFor };
  }

  async function busyPort(): Promise<number> {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  it("names the console and the CLI, prints one readable line per request and run, and says when it has stopped", async () => {
    const stack = start({});
    const banner = await stack.waitFor(/Ctrl-C stops it/);
    const url = /Stepwise is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
    expect(banner).toContain(`console:  ${url}/`);
    expect(banner).toMatch(/npx stepwise run "/);
    expect(banner).toContain("npm link");

    const headers = { authorization: "Bearer sk_test_startup", "content-type": "application/json" };
    const { runId } = (await (
      await fetch(`${url}/v1/runs`, { method: "POST", headers, body: JSON.stringify({ input: "Compute 2+2", mode: "react" }) })
    ).json()) as { runId: string };
    await stack.waitFor(new RegExp(`run ${runId} succeeded`));
    // A refused request is a line too (without its key), though it never reaches the handler.
    const refused = await fetch(`${url}/v1/runs/${runId}`, { headers: { authorization: "Bearer sk_wrong_startup_key" } });
    expect(refused.status).toBe(401);
    await stack.waitFor(new RegExp(`GET /v1/runs/${runId} → 401`));
    expect(stack.output()).not.toContain("sk_wrong_startup_key");
    const after = stack.output().slice(banner.length).split("\n").filter(Boolean);
    expect(after).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  GET /v1/runs/${runId} → 401 \\(\\d+ ms\\) ${runId}$`)),
        expect.stringMatching(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  POST /v1/runs → 202 \\(\\d+ ms\\) ${runId}$`)),
        expect.stringMatching(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  run ${runId} started$`)),
        expect.stringMatching(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  run ${runId} succeeded$`)),
      ]),
    );
    // No JSON: neither log lines nor EMF metric blobs.
    expect(after.filter((line) => line.startsWith("{"))).toEqual([]);

    stack.child.kill("SIGINT");
    expect(await stack.exited).toBe(0);
    expect(stack.output().trimEnd().split("\n").slice(-2)).toEqual(["Stopping Stepwise…", "Stopped."]);
  });

  // One stack for both settings (a start is the costly part): the banner's model check and the log
  // format are independent, and neither involves the model.
  it("with STEPWISE_LOG_FORMAT=json, keeps the JSON log lines; a model endpoint that does not answer is named in the banner, before any run", async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const stack = start({ STEPWISE_LOG_FORMAT: "json", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-test" });
    const banner = await stack.waitFor(/Ctrl-C stops it/);
    expect(banner).toContain(
      `model:    gpt-4o-mini at http://127.0.0.1:${port}/v1 — WARNING: not reachable (ECONNREFUSED); runs will fail until it is (check OPENAI_BASE_URL)`,
    );
    const url = /Stepwise is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
    await fetch(`${url}/v1/runs`, { headers: { authorization: "Bearer sk_test_startup" } });
    const line = (await stack.waitFor(/"message":"request"/)).split("\n").find((l) => l.includes('"message":"request"'))!;
    expect(JSON.parse(line)).toMatchObject({ level: "INFO", message: "request", method: "GET", path: "/v1/runs", status: 200 });
    stack.child.kill("SIGINT");
    expect(await stack.exited).toBe(0);
  });

  it("a busy port: one line naming PORT, no stack trace, exit 1", async () => {
    const port = await busyPort();
    const stack = start({ PORT: String(port) });
    expect(await stack.exited).toBe(1);
    const lines = stack.output().trimEnd().split("\n");
    expect(lines.at(-1)).toBe(
      `Port ${port} is already in use (another Stepwise?). Stop that program, or choose another port: PORT=${port + 1} npm start`,
    );
    expect(stack.output()).not.toMatch(/\n\s+at /);
  });
});
