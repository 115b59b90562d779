import { ifConditionHolds, type Table } from "./table.js";

/** How often a save retries when another save took its version number first. */
const SAVE_ATTEMPTS = 5;

/** Where one kind of versioned item lives: each version's key, and the prefix of a name's versions (or of all). */
export interface VersionedKeys {
  item(tenantId: string, name: string, version: number): { pk: string; sk: string };
  prefix(name?: string): string;
}

/**
 * A tenant's named items, each save an immutable new version (saved agents, tool policies): one item
 * per version under `TENANT#t`, never changed once written; a conditional put gives racing saves
 * each a number of their own.
 */
export class VersionedItems<T extends { name: string; version: number }> {
  constructor(
    private readonly table: Table,
    private readonly keys: VersionedKeys,
    /** Reads a stored item (checks its schema version). */
    private readonly read: (item: Record<string, unknown>) => T,
    /** What the items are called in an error ("saved agent"). */
    private readonly noun: string,
  ) {}

  /** Writes the next version `make(version)` builds. */
  async save(tenantId: string, name: string, make: (version: number) => T): Promise<T> {
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      const value = make(((await this.latest(tenantId, name))?.version ?? 0) + 1);
      const written = await ifConditionHolds(
        this.table.putItem({
          Item: { ...this.keys.item(tenantId, name, value.version), ...value },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      if (written) return value;
    }
    throw new Error(`${this.noun} ${name}: ${SAVE_ATTEMPTS} saves raced for its next version; try again.`);
  }

  async get(tenantId: string, name: string, version?: number): Promise<T | undefined> {
    if (version === undefined) return this.latest(tenantId, name);
    const { Item } = await this.table.getItem({ Key: this.keys.item(tenantId, name, version), ConsistentRead: true });
    return Item ? this.read(Item) : undefined;
  }

  async list(tenantId: string): Promise<T[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(`TENANT#${tenantId}`, this.keys.prefix());
    // Versions come in order: the last one of each name is its latest.
    const latest = new Map<string, Record<string, unknown>>();
    for (const item of items) latest.set(String(item.name), item);
    return [...latest.values()].map(this.read);
  }

  async versions(tenantId: string, name: string): Promise<T[]> {
    return (await this.table.queryPrefix<Record<string, unknown>>(`TENANT#${tenantId}`, this.keys.prefix(name))).map(this.read);
  }

  async delete(tenantId: string, name: string): Promise<boolean> {
    const versions = await this.versions(tenantId, name);
    if (versions.length === 0) return false;
    await this.table.batchWrite(versions.map((v) => ({ DeleteRequest: { Key: this.keys.item(tenantId, name, v.version) } })));
    return true;
  }

  private async latest(tenantId: string, name: string): Promise<T | undefined> {
    const { Items } = await this.table.query({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": this.keys.prefix(name) },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
    });
    return Items?.[0] ? this.read(Items[0]) : undefined;
  }
}
