import { randomBytes } from "node:crypto";

/** A new API key (what a client sends as `Authorization: Bearer …`). */
export const newApiKey = () => `sk_sw_${randomBytes(24).toString("base64url")}`;

/**
 * The API keys port: which tenant a key belongs to. Adapter: ApiKeyStore (DynamoDB, keys stored
 * hashed); fake: shared/testing/memoryApiKeys.ts; contract: test/unit/shared/ports/apiKeys.test.ts.
 */
export interface ApiKeys {
  register(key: string, tenantId: string): Promise<void>;
  /** The key's tenant; undefined for a key never registered. */
  tenantOf(key: string): Promise<string | undefined>;
}
