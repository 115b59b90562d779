import { randomBytes } from "node:crypto";

/** What a stream token opens: one run's stream, for its tenant. */
export interface StreamGrant {
  tenantId: string;
  runId: string;
}

/** A new stream token, and whether a text could be one (anything else is refused unread). */
export const newStreamToken = () => `st_${randomBytes(24).toString("base64url")}`;
export const isStreamTokenShaped = (token: string) => /^st_[A-Za-z0-9_-]{20,64}$/.test(token);

/**
 * The stream tokens port: short-lived, read-only tokens for one run's stream, for browsers
 * (EventSource cannot send an Authorization header, and an API key must never travel in a URL);
 * they open nothing but `GET /v1/runs/{runId}/stream` of the run they were issued for. Adapter:
 * StreamTokenStore (DynamoDB, tokens stored hashed); fake: shared/testing/memoryStreamTokens.ts;
 * contract: test/unit/shared/ports/streamTokens.test.ts.
 */
export interface StreamTokens {
  issue(grant: StreamGrant, ttlSeconds: number): Promise<{ token: string; expiresAt: string }>;
  /** The grant of a valid, unexpired token (at `now`, epoch ms); undefined otherwise. */
  verify(token: string, now?: number): Promise<StreamGrant | undefined>;
}
