import { createHash, randomBytes } from "node:crypto";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys.js";
import type { Table } from "./table.js";

/** API keys are stored as SHA-256 hashes: a leaked table does not leak usable keys. */
export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");

export const newApiKey = () => `sk_sw_${randomBytes(24).toString("base64url")}`;

export class ApiKeyStore {
  constructor(private readonly table: Table) {}

  async register(key: string, tenantId: string): Promise<void> {
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.apiKey(hashApiKey(key)), tenantId, createdAt: new Date().toISOString() },
      }),
    );
  }

  /** The tenant the key belongs to, or undefined. */
  async tenantOf(key: string): Promise<string | undefined> {
    const { Item } = await this.table.doc.send(
      new GetCommand({ TableName: this.table.name, Key: keys.apiKey(hashApiKey(key)) }),
    );
    return Item?.tenantId as string | undefined;
  }
}
