import { describe, expect, it } from "vitest";
import type { IdempotencyKeys } from "../../../../shared/ports/idempotency.js";
import { IdempotencyStore } from "../../../../shared/store/idempotency.js";
import { MemoryIdempotency } from "../../../../shared/testing/memoryIdempotency.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The idempotency keys port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

describe.each([
  { name: "in memory", make: (): IdempotencyKeys => new MemoryIdempotency() },
  { name: "DynamoDB adapter on dynalite", make: (): IdempotencyKeys => new IdempotencyStore(dynamo.table()) },
])("idempotency keys port: $name", ({ make }) => {
  const claim = (runId: string, inProgressSeconds = 60) => ({ runId, bodyHash: "hash_a", inProgressSeconds, ttlSeconds: 86_400 });

  it("a key is claimed once; a second claim learns whose it is", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    expect(await keys.claim(tenant, "key-1", claim("run_1"))).toEqual({ claimed: true });
    await keys.complete(tenant, "key-1");
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: false, runId: "run_1", bodyHash: "hash_a" });
    expect(await keys.claim(freshId("tenant"), "key-1", claim("run_3"))).toEqual({ claimed: true });
  });

  it("only its own run gives a key back; then it can be claimed again", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    await keys.claim(tenant, "key-1", claim("run_1"));
    await keys.release(tenant, "key-1", "run_other");
    expect((await keys.claim(tenant, "key-1", claim("run_2"))).claimed).toBe(false);
    await keys.release(tenant, "key-1", "run_1");
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: true });
  });

  it("a claim still in progress past its expiry can be taken over (its request died)", async () => {
    const keys = make();
    const tenant = freshId("tenant");
    await keys.claim(tenant, "key-1", claim("run_1", -5));
    expect(await keys.claim(tenant, "key-1", claim("run_2"))).toEqual({ claimed: true });
  });
});
