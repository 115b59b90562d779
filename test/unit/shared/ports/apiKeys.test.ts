import { describe, expect, it } from "vitest";
import { type ApiKeys, newApiKey } from "../../../../shared/ports/apiKeys.js";
import { ApiKeyStore } from "../../../../shared/store/apiKeys.js";
import { MemoryApiKeys } from "../../../../shared/testing/memoryApiKeys.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The API keys port's contract: fake and DynamoDB adapter alike (the adapter's cache: test/unit/shared/store/apiKeys.test.ts). */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): ApiKeys => new MemoryApiKeys() },
  { name: "DynamoDB adapter on dynalite", make: (): ApiKeys => new ApiKeyStore(dynamo.table()) },
])("API keys port: $name", ({ make }) => {
  it("a key opens its own tenant once registered; a key never registered, or one a character off, opens none", async () => {
    const keys = make();
    const [tenant, other] = [freshId("tenant"), freshId("tenant")];
    const [first, second] = [newApiKey(), newApiKey()];
    expect(first).toMatch(/^sk_sw_[A-Za-z0-9_-]{32}$/);
    expect(await keys.tenantOf(first)).toBeUndefined();
    await keys.register(first, tenant);
    await keys.register(second, other);
    expect(await keys.tenantOf(first)).toBe(tenant);
    expect(await keys.tenantOf(second)).toBe(other);
    expect(await keys.tenantOf(`${first}x`)).toBeUndefined();
    expect(await keys.tenantOf(first.slice(0, -1))).toBeUndefined();
    expect(await keys.tenantOf("")).toBeUndefined();
  });
});
