import { describe, expect, it } from "vitest";
import type { ToolSourceRecord } from "../../../../shared/contracts/toolSources.js";
import type { ToolSources } from "../../../../shared/ports/toolSources.js";
import { ToolSourceStore } from "../../../../shared/store/toolSources.js";
import { MemoryToolSources } from "../../../../shared/testing/memoryToolSources.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The tool sources port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

const source = (tenantId: string, name: string, fields: Partial<ToolSourceRecord> = {}): ToolSourceRecord => ({
  schemaVersion: 1,
  tenantId,
  name,
  url: `https://mcp.example.com/${name}`,
  headerNames: ["Authorization"],
  sealedHeaders: { keyId: "alias/stepwise", encryptedKey: "ZW5j", iv: "aXY", tag: "dGFn", ciphertext: "c2VhbGVk" },
  access: { search: "read" },
  discovered: [{ name: `${name}__search`, tool: "search", description: "Searches.", access: "read" }],
  createdAt: "2026-11-27T10:00:00.000Z",
  ...fields,
});

describe.each([
  { name: "in memory", make: (): ToolSources => new MemoryToolSources() },
  { name: "DynamoDB adapter on dynalite", make: (): ToolSources => new ToolSourceStore(dynamo.table(), 1) },
])("tool sources port: $name", ({ make }) => {
  it("a source is created once per name and read back as given, sealed headers included", async () => {
    const sources = make();
    const tenant = freshId("tenant");
    expect(await sources.create(source(tenant, "docs"))).toBe(true);
    expect(await sources.create(source(tenant, "docs", { url: "https://other.example.com/" }))).toBe(false);
    expect(await sources.get(tenant, "docs")).toEqual(source(tenant, "docs"));
    expect(await sources.get(tenant, "nope")).toBeUndefined();
  });

  it("lists a tenant's own in name order; a delete removes one, and says whether there was one", async () => {
    const sources = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    for (const name of ["wiki", "crm", "docs"]) await sources.create(source(tenant, name));
    await sources.create(source(other, "crm", { tools: ["search"] }));
    expect((await sources.list(tenant)).map((s) => s.name)).toEqual(["crm", "docs", "wiki"]);
    expect(await sources.list(other)).toEqual([source(other, "crm", { tools: ["search"] })]);
    expect(await sources.delete(tenant, "docs")).toBe(true);
    expect(await sources.delete(tenant, "docs")).toBe(false);
    expect((await sources.list(tenant)).map((s) => s.name)).toEqual(["crm", "wiki"]);
    expect(await sources.get(other, "crm")).toBeDefined();
    expect(await sources.create(source(tenant, "docs"))).toBe(true);
  });

  it("a run is told a source is down once, however many agents notice; another run or source is told again", async () => {
    const sources = make();
    const [run, other] = [freshId("run"), freshId("run")];
    expect(await Promise.all([1, 2, 3].map(() => sources.markUnavailableOnce(run, "crm")))).toEqual(
      expect.arrayContaining([true, false, false]),
    );
    expect(await sources.markUnavailableOnce(run, "crm")).toBe(false);
    expect(await sources.markUnavailableOnce(run, "wiki")).toBe(true);
    expect(await sources.markUnavailableOnce(other, "crm")).toBe(true);
  });
});
