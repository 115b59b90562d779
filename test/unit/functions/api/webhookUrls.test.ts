import { describe, expect, it } from "vitest";
import { routes } from "../../../../functions/api/routes.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";
import { callRoute } from "../../../support/callRoute.js";

/**
 * `POST /v1/runs` with a webhook URL it must refuse (not http(s), not a URL, credentials in it, an
 * address inside the network: metadata, link-local, private), over the in-memory ports: 400, no
 * run, and the Idempotency-Key left unclaimed (the same key with another body starts a run). One
 * refused URL is shown end to end in test/integration/webhooks.test.ts.
 */
// As the local stack allows (its test receivers listen on http://127.0.0.1): what is refused is refused for what it is, not for http.
const { ports, fakes } = memoryPorts({ settings: { webhooks: { policy: { allowHttp: true, allowLoopback: true } } } });
const SIMPLE = { input: "What is 2+2?", mode: "react" };
const submit = (body: unknown, key: string) =>
  callRoute(routes, ports, { method: "POST", path: "/v1/runs", body, headers: { "idempotency-key": key } });

describe("a refused webhook URL", () => {
  it.each([
    ["ftp://x"],
    ["not a url"],
    ["http://169.254.169.254/"],
    ["http://169.254.169.254/latest/meta-data/iam/security-credentials/"],
    ["http://169.254.10.1/hook"],
    ["http://[::ffff:169.254.169.254]/"],
    ["http://[fd00:ec2::254]/"],
    ["http://10.0.0.1/hook"],
    ["http://192.168.1.1/hook"],
    ["http://user:pw@127.0.0.1/hook"],
  ])("%s → 400 at submit; no run is created and the Idempotency-Key stays free", async (url) => {
    const runs = fakes.runs.records.size;
    const key = `refused-${Math.random().toString(36).slice(2)}`;
    const res = await submit({ ...SIMPLE, webhook: { url } }, key);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: expect.stringMatching(/^(invalid_webhook_url|forbidden_webhook_address)$/) });
    expect(res.body.error.message.length).toBeGreaterThan(10);
    expect(fakes.runs.records.size).toBe(runs);
    expect(fakes.executions.calls.length).toBe(runs);
    // The key was not claimed: a different body with it is a new run, not a 409 nor a replay.
    const retried = await submit({ ...SIMPLE, input: "What is 3+3?" }, key);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    expect(fakes.runs.records.size).toBe(runs + 1);
  });
});
