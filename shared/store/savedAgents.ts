import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type SaveAgentRequest, SavedAgent } from "../contracts/agents.js";
import { readVersioned } from "../contracts/schemaVersion.js";
import type { SavedAgents } from "../ports/savedAgents.js";
import { keys } from "./keys.js";
import { ifConditionHolds, itemData, type Table } from "./table.js";

/** How often a save retries when another save took its version number first. */
const SAVE_ATTEMPTS = 5;

/** A tenant's saved agents (`TENANT#t` / `AGENT#<name>#v<version>`): one item per version, never changed once written. */
export class SavedAgentStore implements SavedAgents {
  constructor(private readonly table: Table) {}

  async save(tenantId: string, name: string, config: SaveAgentRequest, now = new Date()): Promise<SavedAgent> {
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      const version = ((await this.latest(tenantId, name))?.version ?? 0) + 1;
      const agent = SavedAgent.parse({ ...config, schemaVersion: 1, name, version, createdAt: now.toISOString() });
      const written = await ifConditionHolds(
        this.table.doc.send(
          new PutCommand({
            TableName: this.table.name,
            Item: { ...keys.savedAgent(tenantId, name, version), ...agent },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
      if (written) return agent;
    }
    throw new Error(`Saved agent ${name}: ${SAVE_ATTEMPTS} saves raced for its next version; try again.`);
  }

  async get(tenantId: string, name: string, version?: number): Promise<SavedAgent | undefined> {
    if (version === undefined) return this.latest(tenantId, name);
    const { Item } = await this.table.doc.send(
      new GetCommand({ TableName: this.table.name, Key: keys.savedAgent(tenantId, name, version), ConsistentRead: true }),
    );
    return Item ? agentOf(Item) : undefined;
  }

  async list(tenantId: string): Promise<SavedAgent[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(keys.tenantPk(tenantId), keys.savedAgentPrefix());
    // Versions come in order: the last one of each name is its latest.
    const latest = new Map<string, Record<string, unknown>>();
    for (const item of items) latest.set(String(item.name), item);
    return [...latest.values()].map(agentOf);
  }

  async versions(tenantId: string, name: string): Promise<SavedAgent[]> {
    return (await this.table.queryPrefix<Record<string, unknown>>(keys.tenantPk(tenantId), keys.savedAgentPrefix(name))).map(agentOf);
  }

  async delete(tenantId: string, name: string): Promise<boolean> {
    const versions = await this.versions(tenantId, name);
    if (versions.length === 0) return false;
    await this.table.batchWrite(versions.map((v) => ({ DeleteRequest: { Key: keys.savedAgent(tenantId, name, v.version) } })));
    return true;
  }

  private async latest(tenantId: string, name: string): Promise<SavedAgent | undefined> {
    const { Items } = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.name,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.tenantPk(tenantId), ":prefix": keys.savedAgentPrefix(name) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return Items?.[0] ? agentOf(Items[0]) : undefined;
  }
}

function agentOf(item: Record<string, unknown>): SavedAgent {
  return readVersioned(SavedAgent, `saved agent ${String(item.name)}`, itemData(item));
}
