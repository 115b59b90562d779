import type { Delivery, DeliveryAttempt, SigningSecret, Webhooks } from "../ports/webhooks.js";
import { newWebhookSecret } from "../webhooks/signing.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, itemData, type Table } from "./table.js";

export class WebhookStore implements Webhooks {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** The tenant's active signing secrets, creating the first one on first use. */
  async secrets(tenantId: string, now = new Date()): Promise<SigningSecret[]> {
    const { Item } = await this.table.getItem({ Key: keys.webhookSecrets(tenantId), ConsistentRead: true });
    const active = ((Item?.secrets ?? []) as SigningSecret[]).filter((s) => !s.expiresAt || new Date(s.expiresAt) > now);
    if (active.length > 0) return active;
    const first = { secret: newWebhookSecret(), createdAt: now.toISOString() };
    const written = await ifConditionHolds(
      this.table.putItem({ Item: { ...keys.webhookSecrets(tenantId), secrets: [first] }, ConditionExpression: "attribute_not_exists(pk)" }),
    );
    if (written) return [first];
    return this.secrets(tenantId, now); // another request created it first
  }

  /** A new secret signs from now on; the current ones keep signing for `overlapHours`. */
  async rotate(tenantId: string, overlapHours: number, now = new Date()): Promise<SigningSecret[]> {
    const current = await this.secrets(tenantId, now);
    const until = new Date(now.getTime() + overlapHours * 3_600_000).toISOString();
    const secrets = [
      { secret: newWebhookSecret(), createdAt: now.toISOString() },
      ...current.map((s) => ({ ...s, expiresAt: s.expiresAt && s.expiresAt < until ? s.expiresAt : until })),
    ];
    await this.table.putItem({ Item: { ...keys.webhookSecrets(tenantId), secrets } });
    return secrets;
  }

  async isDisabled(tenantId: string, url: string): Promise<boolean> {
    const { Item } = await this.table.getItem({ Key: keys.webhookEndpoint(tenantId, url) });
    return Item?.disabled === true;
  }

  /** The receiver answered 410 Gone: stop sending to it. */
  async disable(tenantId: string, url: string): Promise<void> {
    await this.table.putItem({
      Item: { ...keys.webhookEndpoint(tenantId, url), url, disabled: true, disabledAt: new Date().toISOString() },
    });
  }

  /** A person asked to send to it again (a redelivery): the endpoint is back in use. */
  async enable(tenantId: string, url: string): Promise<void> {
    await this.table.putItem({ Item: { ...keys.webhookEndpoint(tenantId, url), url, disabled: false } });
  }

  /** Creates the delivery record unless it exists (the same event is queued at least once). */
  async createDelivery(delivery: Delivery): Promise<Delivery> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: { ...keys.delivery(delivery.runId, delivery.deliveryId), ...delivery, ttl: expiresAt(this.retentionDays) },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    if (written) return delivery;
    const existing = await this.getDelivery(delivery.runId, delivery.deliveryId);
    if (!existing) throw new Error(`Webhook delivery ${delivery.deliveryId} was there when written, yet cannot be read.`);
    return existing;
  }

  async getDelivery(runId: string, deliveryId: string): Promise<Delivery | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.delivery(runId, deliveryId), ConsistentRead: true });
    return Item ? strip(Item) : undefined;
  }

  async listDeliveries(runId: string): Promise<Delivery[]> {
    return (await this.table.queryPrefix<Record<string, unknown>>(keys.runPk(runId), keys.deliveryPrefix)).map(strip);
  }

  async recordAttempt(
    runId: string,
    deliveryId: string,
    attempt: DeliveryAttempt,
    status: Delivery["status"],
    nextAttemptAt?: string,
  ): Promise<void> {
    await this.table.updateItem({
      Key: keys.delivery(runId, deliveryId),
      UpdateExpression: "SET attempts = list_append(attempts, :attempt), #status = :status, updatedAt = :now, nextAttemptAt = :next",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":attempt": [attempt],
        ":status": status,
        ":now": new Date().toISOString(),
        ":next": nextAttemptAt ?? null,
      },
    });
  }

  /** Redelivery starts a new series of attempts for the same message (same webhook-id). */
  async reopen(delivery: Delivery): Promise<number> {
    const seriesStart = delivery.attempts.length;
    await this.table.updateItem({
      Key: keys.delivery(delivery.runId, delivery.deliveryId),
      UpdateExpression: "SET #status = :pending, updatedAt = :now, seriesStart = :start",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":pending": "pending", ":now": new Date().toISOString(), ":start": seriesStart },
    });
    return seriesStart + 1;
  }
}

function strip(item: Record<string, unknown>): Delivery {
  const data = itemData(item) as unknown as Delivery & { nextAttemptAt?: string | null };
  return { ...data, nextAttemptAt: data.nextAttemptAt ?? undefined };
}
