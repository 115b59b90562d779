import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { newApiKey } from "../../../../shared/ports/apiKeys.js";
import { API_KEY_CACHE_MS, ApiKeyStore, hashApiKey } from "../../../../shared/store/apiKeys.js";
import { keys } from "../../../../shared/store/keys.js";
import { useDynalite } from "../../../support/dynalite.js";

/** API keys on dynalite: each API request checks its key, so a container remembers the keys it found for a minute. */

const dynamo = useDynalite();
let lookups = 0;

beforeAll(async () => {
  (await dynamo.table().client()).middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === "GetItemCommand") lookups++;
      return next(args);
    },
    { step: "initialize", name: "countLookups" },
  );
});

afterEach(() => vi.restoreAllMocks());

describe("API key lookups", () => {
  it("a key found is looked up once a minute; a deleted key stops working when that minute is over", async () => {
    const table = dynamo.table();
    const store = new ApiKeyStore(table);
    const key = newApiKey();
    await store.register(key, "acme");
    lookups = 0;
    expect(await store.tenantOf(key)).toBe("acme");
    expect(await store.tenantOf(key)).toBe("acme");
    expect(lookups).toBe(1);

    await table.deleteItem({ Key: keys.apiKey(hashApiKey(key)) });
    expect(await store.tenantOf(key)).toBe("acme"); // still within the minute
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + API_KEY_CACHE_MS + 1);
    expect(await store.tenantOf(key)).toBeUndefined();
    expect(await store.tenantOf(key)).toBeUndefined();
    expect(lookups).toBe(3); // an unknown key is looked up every time
  });

  it("a key unknown at first works as soon as it is registered, for its own tenant only", async () => {
    const store = new ApiKeyStore(dynamo.table());
    const [first, second] = [newApiKey(), newApiKey()];
    expect(await store.tenantOf(first)).toBeUndefined();
    await store.register(first, "acme");
    await store.register(second, "globex");
    expect(await store.tenantOf(first)).toBe("acme");
    expect(await store.tenantOf(second)).toBe("globex");
    expect(await store.tenantOf(`${first}x`)).toBeUndefined();
  });
});
