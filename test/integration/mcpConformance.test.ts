import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startKeyProxy } from "../support/keyProxy.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance`, its active
 * suite) against `/mcp` on the local stack. Its client sends no API key, so a proxy adds one.
 *
 * Stepwise serves its own tools (run_task, get_run, cancel_run, decide) and nothing else; the
 * scenarios that fail are exactly the features it does not offer, listed below with why. A
 * scenario of this list that starts passing, or any other that fails, fails this test. Of the
 * passing ones, tools-call-simple-text passes on the suite's own terms although its fixture tool
 * (test_simple_text) is absent: the suite accepts any tool result, here "not found".
 */
const UNSUPPORTED: Record<string, string> = {
  "logging-set-level": "no logging capability (run events are progress notifications)",
  "completion-complete": "no prompts or resource templates to complete",
  "tools-call-image": "the suite's fixture tool (test_image_content); Stepwise serves only its own tools",
  "tools-call-audio": "the suite's fixture tool (test_audio_content)",
  "tools-call-embedded-resource": "the suite's fixture tool (test_embedded_resource); run files are resource links",
  "tools-call-mixed-content": "the suite's fixture tool (test_multiple_content_types)",
  "tools-call-with-logging": "the suite's fixture tool, and no logging capability",
  "tools-call-with-progress": "the suite's fixture tool (run_task sends progress; mcpServer.test.ts checks it)",
  "tools-call-sampling": "the suite's fixture tool; Stepwise calls its own model, never the client's",
  "tools-call-elicitation": "the suite's fixture tool (run_task elicits approvals; mcpServer.test.ts checks it)",
  "elicitation-sep1034-defaults": "the suite's fixture tool",
  "elicitation-sep1330-enums": "the suite's fixture tool",
  "resources-list": "no resources (files are resource links to the API)",
  "resources-read-text": "no resources",
  "resources-read-binary": "no resources",
  "resources-templates-read": "no resources",
  "resources-subscribe": "no resources",
  "resources-unsubscribe": "no resources",
  "prompts-list": "no prompts",
  "prompts-get-simple": "no prompts",
  "prompts-get-with-args": "no prompts",
  "prompts-get-embedded-resource": "no prompts",
  "prompts-get-with-image": "no prompts",
  "dns-rebinding-protection": "no Host allow-list: every request needs the API key, which a rebinding page does not have",
};

let stack: RunningStack;
let proxy: Awaited<ReturnType<typeof startKeyProxy>> | undefined;
const outputDir = mkdtempSync(path.join(tmpdir(), "mcp-conformance-"));

beforeAll(async () => {
  stack = await startStack();
  proxy = await startKeyProxy(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  rmSync(outputDir, { recursive: true, force: true });
});

it("passes the conformance suite's server scenarios except the features Stepwise does not offer", async () => {
  const cli = path.resolve("node_modules/@modelcontextprotocol/conformance/dist/index.js");
  // Asynchronous: the proxy lives in this process. The suite exits non-zero when a scenario fails.
  await promisify(execFile)(process.execPath, [cli, "server", "--url", `${proxy!.url}/mcp`, "-o", outputDir], { timeout: 400_000 }).catch(
    (error) => {
      if (!error.stdout?.includes("=== SUMMARY ===")) throw error;
    },
  );

  const results = readdirSync(outputDir).map((dir) => {
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const checks = JSON.parse(readFileSync(path.join(outputDir, dir, "checks.json"), "utf8")) as {
      status: string;
      id: string;
      errorMessage?: string;
    }[];
    return { scenario, passed: checks.filter((c) => c.status === "SUCCESS").length, failed: checks.filter((c) => c.status === "FAILURE") };
  });
  const failing = results
    .filter((r) => r.failed.length > 0)
    .map((r) => r.scenario)
    .sort();
  const passing = results
    .filter((r) => r.failed.length === 0)
    .map((r) => r.scenario)
    .sort();
  const checks = results.reduce((n, r) => ({ passed: n.passed + r.passed, failed: n.failed + r.failed.length }), { passed: 0, failed: 0 });
  console.log(
    `MCP conformance: ${passing.length} of ${results.length} scenarios pass (${checks.passed} checks passed, ${checks.failed} failed); unsupported: ${failing.join(", ")}`,
  );

  expect(results.length).toBe(30);
  expect(passing).toEqual(
    expect.arrayContaining(["server-initialize", "ping", "tools-list", "tools-call-error", "server-sse-multiple-streams"]),
  );
  const unexpected = results.filter((r) => r.failed.length > 0 && !(r.scenario in UNSUPPORTED));
  expect(unexpected.map((r) => ({ scenario: r.scenario, failed: r.failed.map((c) => `${c.id}: ${c.errorMessage}`) }))).toEqual([]);
  expect(failing).toEqual(Object.keys(UNSUPPORTED).sort());
}, 500_000);
