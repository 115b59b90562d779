import { describe, expect, it } from "vitest";
import { policyRoutes } from "../../../../functions/api/policies.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";
import { callRoute } from "../../../support/callRoute.js";

/**
 * `/v1/policies` over the in-memory ports: a policy Cedar refuses (text that does not parse, an
 * unknown tool, a permit) or a mode that does not exist is a 400 with the reason, and nothing is
 * saved. Enforcing a saved policy on a run is shown end to end in test/integration/approvals.test.ts.
 */
const { ports } = memoryPorts();
const SIZE = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };`;

const call = (method: string, path: string, body?: unknown) => callRoute(policyRoutes, ports, { method, path, body });

describe("PUT /v1/policies/{name}", () => {
  it.each([
    ["text that does not parse", { cedar: "forbid(principal, action resource);" }, /does not parse/],
    ["an unknown tool", { cedar: 'forbid(principal, action == Action::"wire_money", resource);' }, /wire_money/],
    ["a permit", { cedar: "permit(principal, action, resource);" }, /Only forbid statements/],
    ["a mode that does not exist", { cedar: SIZE, mode: "sometimes" }, /mode/],
  ])("refuses %s with 400 and the reason; nothing is saved", async (_name, body, message) => {
    const res = await call("PUT", "/v1/policies/bad", body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(message);
    expect((await call("GET", "/v1/policies")).body).toEqual({ policies: [] });
    expect((await call("GET", "/v1/policies/bad")).status).toBe(404);
  });

  it("saves a policy that fits the catalogue as version 1 (the refusals above are not the route refusing everything)", async () => {
    const saved = await call("PUT", "/v1/policies/artifact-size", { cedar: SIZE });
    expect(saved).toMatchObject({ status: 201, body: { name: "artifact-size", version: 1, mode: "enforce" } });
    expect((await call("GET", "/v1/policies")).body.policies.map((p: { name: string }) => p.name)).toEqual(["artifact-size"]);
  });
});
