import type { Delivery, DeliveryAttempt, SigningSecret, Webhooks } from "../ports/webhooks.js";
import { newWebhookSecret } from "../webhooks/signing.js";
import { stored } from "./clone.js";

/** The webhooks port in memory: secrets, disabled endpoints, and delivery records created once. */
export class MemoryWebhooks implements Webhooks {
  readonly deliveries = new Map<string, Delivery>();
  private readonly secretsOf = new Map<string, SigningSecret[]>();
  private readonly disabled = new Set<string>();

  async secrets(tenantId: string, now = new Date()): Promise<SigningSecret[]> {
    const active = (this.secretsOf.get(tenantId) ?? []).filter((s) => !s.expiresAt || new Date(s.expiresAt) > now);
    if (active.length > 0) return stored(active);
    const first = { secret: newWebhookSecret(), createdAt: now.toISOString() };
    this.secretsOf.set(tenantId, [first]);
    return [first];
  }

  async rotate(tenantId: string, overlapHours: number, now = new Date()): Promise<SigningSecret[]> {
    const current = await this.secrets(tenantId, now);
    const until = new Date(now.getTime() + overlapHours * 3_600_000).toISOString();
    const secrets = [
      { secret: newWebhookSecret(), createdAt: now.toISOString() },
      ...current.map((s) => ({ ...s, expiresAt: s.expiresAt && s.expiresAt < until ? s.expiresAt : until })),
    ];
    this.secretsOf.set(tenantId, secrets);
    return stored(secrets);
  }

  async isDisabled(tenantId: string, url: string): Promise<boolean> {
    return this.disabled.has(`${tenantId}|${url}`);
  }

  async disable(tenantId: string, url: string): Promise<void> {
    this.disabled.add(`${tenantId}|${url}`);
  }

  async enable(tenantId: string, url: string): Promise<void> {
    this.disabled.delete(`${tenantId}|${url}`);
  }

  async createDelivery(delivery: Delivery): Promise<Delivery> {
    const key = `${delivery.runId}|${delivery.deliveryId}`;
    const kept = this.deliveries.get(key) ?? stored(delivery);
    this.deliveries.set(key, kept);
    return stored(kept);
  }

  async getDelivery(runId: string, deliveryId: string): Promise<Delivery | undefined> {
    return stored(this.deliveries.get(`${runId}|${deliveryId}`));
  }

  async listDeliveries(runId: string): Promise<Delivery[]> {
    return stored([...this.deliveries.values()].filter((d) => d.runId === runId)).sort((a, b) => a.deliveryId.localeCompare(b.deliveryId));
  }

  async recordAttempt(
    runId: string,
    deliveryId: string,
    attempt: DeliveryAttempt,
    status: Delivery["status"],
    nextAttemptAt?: string,
  ): Promise<void> {
    const delivery = this.deliveries.get(`${runId}|${deliveryId}`);
    if (!delivery) throw new Error(`no delivery ${deliveryId}`);
    delivery.attempts.push(stored(attempt));
    delivery.status = status;
    delivery.updatedAt = new Date().toISOString();
    delivery.nextAttemptAt = nextAttemptAt;
  }

  async reopen(delivery: Delivery): Promise<number> {
    const record = this.deliveries.get(`${delivery.runId}|${delivery.deliveryId}`);
    if (!record) throw new Error(`No webhook delivery ${delivery.deliveryId} on run ${delivery.runId}.`);
    const seriesStart = delivery.attempts.length;
    Object.assign(record, { status: "pending", seriesStart, updatedAt: new Date().toISOString() });
    return seriesStart + 1;
  }
}
