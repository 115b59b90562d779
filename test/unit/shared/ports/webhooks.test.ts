import { describe, expect, it } from "vitest";
import type { Delivery, Webhooks } from "../../../../shared/ports/webhooks.js";
import { WebhookStore } from "../../../../shared/store/webhooks.js";
import { MemoryWebhooks } from "../../../../shared/testing/memoryWebhooks.js";
import { freshId, useDynalite } from "../../../support/dynalite.js";

/** The webhooks port's contract: fake and DynamoDB adapter alike. */

const dynamo = useDynalite();

const delivery = (runId: string, deliveryId: string): Delivery => ({
  deliveryId,
  runId,
  type: "run.succeeded",
  url: "https://hooks.example.com/stepwise",
  body: JSON.stringify({ type: "run.succeeded", data: { runId } }),
  status: "pending",
  attempts: [],
  createdAt: "2026-11-25T10:00:00.000Z",
  updatedAt: "2026-11-25T10:00:00.000Z",
});

describe.each([
  { name: "in memory", make: (): Webhooks => new MemoryWebhooks() },
  { name: "DynamoDB adapter on dynalite", make: (): Webhooks => new WebhookStore(dynamo.table(), 1) },
])("webhooks port: $name", ({ make }) => {
  it("a tenant's first secret is made once, even by requests racing for it, and is the tenant's own", async () => {
    const webhooks = make();
    const tenant = freshId("tenant");
    const first = await Promise.all([webhooks.secrets(tenant), webhooks.secrets(tenant), webhooks.secrets(tenant)]);
    expect(new Set(first.map((s) => s[0]!.secret)).size).toBe(1);
    expect(first[0]).toHaveLength(1);
    expect((await webhooks.secrets(freshId("tenant")))[0]!.secret).not.toBe(first[0]![0]!.secret);
  });

  it("a rotation signs with the new secret first and keeps the old one only until the overlap ends", async () => {
    const webhooks = make();
    const tenant = freshId("tenant");
    const now = new Date("2026-11-25T10:00:00.000Z");
    const [old] = await webhooks.secrets(tenant, now);
    const rotated = await webhooks.rotate(tenant, 24, now);
    expect(rotated).toHaveLength(2);
    expect(rotated[0]!.secret).not.toBe(old!.secret);
    expect(rotated[1]!.secret).toBe(old!.secret);
    expect(rotated[1]!.expiresAt).toBe("2026-11-26T10:00:00.000Z");
    expect((await webhooks.secrets(tenant, new Date("2026-11-26T09:00:00.000Z"))).map((s) => s.secret)).toEqual(
      rotated.map((s) => s.secret),
    );
    expect((await webhooks.secrets(tenant, new Date("2026-11-26T11:00:00.000Z"))).map((s) => s.secret)).toEqual([rotated[0]!.secret]);
  });

  it("an endpoint disabled for one tenant stays enabled for another, and can be enabled again", async () => {
    const webhooks = make();
    const [a, b] = [freshId("tenant"), freshId("tenant")];
    const url = "https://hooks.example.com/gone";
    expect(await webhooks.isDisabled(a, url)).toBe(false);
    await webhooks.disable(a, url);
    expect(await webhooks.isDisabled(a, url)).toBe(true);
    expect(await webhooks.isDisabled(b, url)).toBe(false);
    await webhooks.enable(a, url);
    expect(await webhooks.isDisabled(a, url)).toBe(false);
  });

  it("a delivery is created once: the same event queued again finds the record with its attempts", async () => {
    const webhooks = make();
    const runId = freshId("run");
    expect(await webhooks.createDelivery(delivery(runId, "msg_1"))).toEqual(delivery(runId, "msg_1"));
    const attempt = { attempt: 1, at: "2026-11-25T10:00:01.000Z", ok: false, status: 503, durationMs: 12 };
    await webhooks.recordAttempt(runId, "msg_1", attempt, "pending", "2026-11-25T10:00:31.000Z");
    const again = await webhooks.createDelivery({ ...delivery(runId, "msg_1"), body: "{}" });
    expect(again).toMatchObject({ body: delivery(runId, "msg_1").body, attempts: [attempt], nextAttemptAt: "2026-11-25T10:00:31.000Z" });
  });

  it("attempts are kept in order; a redelivery starts a new series after them", async () => {
    const webhooks = make();
    const runId = freshId("run");
    await webhooks.createDelivery(delivery(runId, "msg_2"));
    await webhooks.createDelivery(delivery(runId, "msg_1"));
    const failed = { attempt: 1, at: "2026-11-25T10:00:01.000Z", ok: false, error: "connection refused", durationMs: 3 };
    await webhooks.recordAttempt(runId, "msg_1", failed, "dead");
    const dead = (await webhooks.getDelivery(runId, "msg_1"))!;
    expect(dead).toMatchObject({ status: "dead", attempts: [failed] });
    expect(dead.nextAttemptAt).toBeUndefined();
    expect(await webhooks.reopen(dead)).toBe(2);
    const ok = { attempt: 2, at: "2026-11-25T11:00:00.000Z", ok: true, status: 204, durationMs: 9 };
    await webhooks.recordAttempt(runId, "msg_1", ok, "delivered");
    expect(await webhooks.getDelivery(runId, "msg_1")).toMatchObject({ status: "delivered", seriesStart: 1, attempts: [failed, ok] });
    expect((await webhooks.listDeliveries(runId)).map((d) => d.deliveryId)).toEqual(["msg_1", "msg_2"]);
    expect(await webhooks.getDelivery(runId, "msg_3")).toBeUndefined();
    expect(await webhooks.listDeliveries(freshId("run"))).toEqual([]);
  });
});
