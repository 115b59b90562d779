import { createHash } from "node:crypto";
import type { ApiKeys } from "../ports/apiKeys.js";
import { keys } from "./keys.js";
import type { Table } from "./table.js";

/** API keys are stored as SHA-256 hashes: a leaked table does not leak usable keys. */
export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");

/** How long a container trusts a key it has looked up (API Gateway's authorizer cache does the same, for 5 minutes). */
export const API_KEY_CACHE_MS = 60_000;
const CACHED_KEYS = 1_000;

export class ApiKeyStore implements ApiKeys {
  /** Keys found lately, by hash: every API request checks its key, a polling client many times a minute. */
  private readonly found = new Map<string, { tenantId: string; until: number }>();

  constructor(private readonly table: Table) {}

  async register(key: string, tenantId: string): Promise<void> {
    await this.table.putItem({ Item: { ...keys.apiKey(hashApiKey(key)), tenantId, createdAt: new Date().toISOString() } });
  }

  /**
   * The tenant the key belongs to, or undefined. A key found is remembered for API_KEY_CACHE_MS, so
   * a key deleted from the table stops working within that time; an unknown key is looked up each
   * time, so a new key works at once.
   */
  async tenantOf(key: string): Promise<string | undefined> {
    const hash = hashApiKey(key);
    const cached = this.found.get(hash);
    if (cached && cached.until > Date.now()) return cached.tenantId;
    const { Item } = await this.table.getItem({ Key: keys.apiKey(hash) });
    const tenantId = Item?.tenantId as string | undefined;
    this.found.delete(hash);
    if (tenantId) {
      this.found.set(hash, { tenantId, until: Date.now() + API_KEY_CACHE_MS });
      if (this.found.size > CACHED_KEYS) {
        const [oldest] = this.found.keys(); // a Map keeps insertion order
        this.found.delete(oldest);
      }
    }
    return tenantId;
  }
}
