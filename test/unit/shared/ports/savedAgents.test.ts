import { describe, expect, it } from "vitest";
import type { SavedAgents } from "../../../../shared/ports/savedAgents.js";
import { SavedAgentStore } from "../../../../shared/store/savedAgents.js";
import { MemorySavedAgents } from "../../../../shared/testing/memorySavedAgents.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The saved agents port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): SavedAgents => new MemorySavedAgents() },
  { name: "DynamoDB adapter on dynalite", make: (): SavedAgents => new SavedAgentStore(dynamo.table()) },
])("saved agents port: $name", ({ make }) => {
  it("each save is a new version; the latest is read without a version, an old one by its number, unchanged", async () => {
    const agents = make();
    const tenant = freshId("tenant");
    const first = await agents.save(tenant, "analyst", { mode: "react", tools: ["calculator"], instructions: "Be brief." });
    const second = await agents.save(tenant, "analyst", { mode: "plan_solve", tools: ["calculator", "text_stats"] });
    expect([first.version, second.version]).toEqual([1, 2]);
    expect(await agents.get(tenant, "analyst")).toEqual(second);
    expect(await agents.get(tenant, "analyst", 1)).toEqual(first);
    expect((await agents.get(tenant, "analyst", 1))?.instructions).toBe("Be brief.");
    expect(await agents.get(tenant, "analyst", 3)).toBeUndefined();
    expect((await agents.versions(tenant, "analyst")).map((v) => v.version)).toEqual([1, 2]);
  });

  it("saves racing for one name each get a version of their own", async () => {
    const agents = make();
    const tenant = freshId("tenant");
    const saved = await Promise.all([1, 2, 3].map((i) => agents.save(tenant, "writer", { description: `take ${i}` })));
    expect(saved.map((s) => s.version).sort()).toEqual([1, 2, 3]);
    expect((await agents.versions(tenant, "writer")).map((v) => v.description).sort()).toEqual(["take 1", "take 2", "take 3"]);
  });

  it("lists the latest of each in name order, a name's prefix never reading another name, and only the tenant's own", async () => {
    const agents = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    await agents.save(tenant, "b", { description: "b1" });
    await agents.save(tenant, "a", { description: "a1" });
    await agents.save(tenant, "a-2", { description: "a-2 v1" });
    await agents.save(tenant, "a", { description: "a2" });
    await agents.save(other, "a", { description: "other" });
    expect((await agents.list(tenant)).map((a) => [a.name, a.version, a.description])).toEqual([
      ["a", 2, "a2"],
      ["a-2", 1, "a-2 v1"],
      ["b", 1, "b1"],
    ]);
    expect((await agents.versions(tenant, "a")).map((a) => a.description)).toEqual(["a1", "a2"]);
    expect(await agents.get(other, "b")).toBeUndefined();
  });

  it("a delete removes every version; deleting again or an unknown name reports none", async () => {
    const agents = make();
    const tenant = freshId("tenant");
    await agents.save(tenant, "gone", {});
    await agents.save(tenant, "gone", {});
    await agents.save(tenant, "kept", {});
    expect(await agents.delete(tenant, "gone")).toBe(true);
    expect(await agents.get(tenant, "gone")).toBeUndefined();
    expect(await agents.get(tenant, "gone", 1)).toBeUndefined();
    expect(await agents.delete(tenant, "gone")).toBe(false);
    expect((await agents.list(tenant)).map((a) => a.name)).toEqual(["kept"]);
    expect((await agents.save(tenant, "gone", {})).version).toBe(1);
  });
});
