import { describe, expect, it } from "vitest";
import type { ToolPolicies } from "../../../../shared/ports/policies.js";
import { PolicyStore } from "../../../../shared/store/policies.js";
import { MemoryPolicies } from "../../../../shared/testing/memoryPolicies.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The tool policies port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();
const SIZE = 'forbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };';

describe.each([
  { name: "in memory", make: (): ToolPolicies => new MemoryPolicies() },
  { name: "DynamoDB adapter on dynalite", make: (): ToolPolicies => new PolicyStore(dynamo.table()) },
])("tool policies port: $name", ({ make }) => {
  it("each save is a new version; the latest is read without a version, an old one by its number, unchanged", async () => {
    const policies = make();
    const tenant = freshId("tenant");
    const first = await policies.save(tenant, "artifact-size", { cedar: SIZE, mode: "log_only" });
    const second = await policies.save(tenant, "artifact-size", { cedar: SIZE, mode: "enforce", description: "Now enforced." });
    expect([first.version, second.version, first.mode, second.mode]).toEqual([1, 2, "log_only", "enforce"]);
    expect(await policies.get(tenant, "artifact-size")).toEqual(second);
    expect(await policies.get(tenant, "artifact-size", 1)).toEqual(first);
    expect(await policies.get(tenant, "artifact-size", 3)).toBeUndefined();
    expect((await policies.versions(tenant, "artifact-size")).map((v) => v.version)).toEqual([1, 2]);
  });

  it("lists the latest of each in name order, only the tenant's own; a delete removes every version", async () => {
    const policies = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    await policies.save(tenant, "b", { cedar: SIZE, mode: "enforce" });
    await policies.save(tenant, "a", { cedar: SIZE, mode: "enforce" });
    await policies.save(tenant, "a-2", { cedar: SIZE, mode: "enforce" });
    await policies.save(tenant, "a", { cedar: SIZE, mode: "log_only" });
    await policies.save(other, "c", { cedar: SIZE, mode: "enforce" });
    expect((await policies.list(tenant)).map((p) => [p.name, p.version, p.mode])).toEqual([
      ["a", 2, "log_only"],
      ["a-2", 1, "enforce"],
      ["b", 1, "enforce"],
    ]);
    expect(await policies.get(other, "a")).toBeUndefined();
    expect(await policies.delete(tenant, "a")).toBe(true);
    expect(await policies.delete(tenant, "a")).toBe(false);
    expect((await policies.list(tenant)).map((p) => p.name)).toEqual(["a-2", "b"]);
    expect((await policies.save(tenant, "a", { cedar: SIZE, mode: "enforce" })).version).toBe(1);
  });
});
