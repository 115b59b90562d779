export interface SigningSecret {
  secret: string;
  createdAt: string;
  /** After a rotation the old secret keeps signing until then, so receivers can switch over. */
  expiresAt?: string;
}

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

/** One webhook message and every attempt to deliver it. */
export interface Delivery {
  deliveryId: string;
  runId: string;
  type: string;
  url: string;
  body: string;
  status: "pending" | "delivered" | "dead" | "disabled";
  attempts: DeliveryAttempt[];
  /** Attempts made before the current series (a redelivery starts a new series). */
  seriesStart?: number;
  nextAttemptAt?: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The webhooks port: a tenant's signing secrets and disabled endpoints, and each message's
 * delivery record (created once: the same event is queued at least once). Adapter: WebhookStore
 * (DynamoDB); fake: shared/testing/memoryWebhooks.ts.
 */
export interface Webhooks {
  /** The tenant's active signing secrets, creating the first one on first use. */
  secrets(tenantId: string, now?: Date): Promise<SigningSecret[]>;
  rotate(tenantId: string, overlapHours: number, now?: Date): Promise<SigningSecret[]>;
  isDisabled(tenantId: string, url: string): Promise<boolean>;
  disable(tenantId: string, url: string): Promise<void>;
  enable(tenantId: string, url: string): Promise<void>;
  /** Creates the delivery record unless it exists; the record as it stands. */
  createDelivery(delivery: Delivery): Promise<Delivery>;
  getDelivery(runId: string, deliveryId: string): Promise<Delivery | undefined>;
  listDeliveries(runId: string): Promise<Delivery[]>;
  recordAttempt(
    runId: string,
    deliveryId: string,
    attempt: DeliveryAttempt,
    status: Delivery["status"],
    nextAttemptAt?: string,
  ): Promise<void>;
  /** Redelivery starts a new series of attempts; returns where it starts. */
  reopen(delivery: Delivery): Promise<number>;
}
