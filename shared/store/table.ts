import type {
  DeleteCommandInput,
  DeleteCommandOutput,
  DynamoDBDocumentClient,
  GetCommandInput,
  GetCommandOutput,
  NativeAttributeValue,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import DataLoader from "dataloader";
import { loadOnce } from "../lazyImport.js";
import { keys } from "./keys.js";

type Key = { pk: string; sk: string };

/** An item as the document client reads and writes it. */
export type Item = Record<string, NativeAttributeValue>;

/** A BatchWriteItem request: `{ PutRequest: { Item } }` or `{ DeleteRequest: { Key } }`. */
export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/**
 * A DataLoader that sends together what was asked for in one turn of the event loop: the request
 * goes out after the last caller of the turn asked. Nothing is cached; every load is read afresh.
 */
export function sameTurnBatcher<K, V>(batch: (keys: readonly K[]) => Promise<(V | Error)[]>, maxBatchSize?: number): DataLoader<K, V> {
  return new DataLoader(batch, { cache: false, maxBatchSize, batchScheduleFn: (dispatch) => setImmediate(dispatch) });
}

const writeKeyOf = (request: WriteRequest) => {
  const { pk, sk } = "PutRequest" in request ? request.PutRequest.Item : request.DeleteRequest.Key;
  return `${pk}\n${sk}`;
};

/**
 * The document client's commands. They load with the client, on the first request (a cold start
 * reads none of the SDK: it is most of what a handler would otherwise load at import).
 */
const commands = loadOnce(() => import("@aws-sdk/lib-dynamodb"));

/** A request's input without the table's name, which the table adds. */
type On<T> = Omit<T, "TableName">;

/**
 * The one table: a document client and its name. Repositories take this, never a global, and send
 * through its methods, which take the request's plain input. The client is made on the first
 * request (`client`: loaded once, again after a failed load); it leaves undefined fields out and
 * stores class instances as maps (functions/awsClients.ts makes it).
 */
export class Table {
  /** Coalesced consistent reads, one loader per projection ("" = whole items). */
  private readonly readers = new Map<string, DataLoader<Key, Item | undefined>>();
  /** Coalesced writes (see batchWrite), made on the first write. */
  private writer?: DataLoader<WriteRequest, true>;

  /** The document client, made on first use. */
  readonly client: () => Promise<DynamoDBDocumentClient>;

  constructor(
    client: () => Promise<DynamoDBDocumentClient>,
    readonly name: string,
  ) {
    this.client = loadOnce(client);
  }

  /** The commands and the client, both loaded. */
  private async sdk() {
    return Promise.all([commands(), this.client()]);
  }

  /** GetItem. */
  async getItem(input: On<GetCommandInput>): Promise<GetCommandOutput> {
    const [sdk, doc] = await this.sdk();
    return doc.send(new sdk.GetCommand({ TableName: this.name, ...input }));
  }

  /** PutItem. */
  async putItem(input: On<PutCommandInput>): Promise<PutCommandOutput> {
    const [sdk, doc] = await this.sdk();
    return doc.send(new sdk.PutCommand({ TableName: this.name, ...input }));
  }

  /** UpdateItem. */
  async updateItem(input: On<UpdateCommandInput>): Promise<UpdateCommandOutput> {
    const [sdk, doc] = await this.sdk();
    return doc.send(new sdk.UpdateCommand({ TableName: this.name, ...input }));
  }

  /** DeleteItem. */
  async deleteItem(input: On<DeleteCommandInput>): Promise<DeleteCommandOutput> {
    const [sdk, doc] = await this.sdk();
    return doc.send(new sdk.DeleteCommand({ TableName: this.name, ...input }));
  }

  /** One page of a Query (queryPrefix follows the pages). */
  async query(input: On<QueryCommandInput>): Promise<QueryCommandOutput> {
    const [sdk, doc] = await this.sdk();
    return doc.send(new sdk.QueryCommand({ TableName: this.name, ...input }));
  }

  /** One plain read that proves the table answers (the health check); fails as the read fails. */
  async probe(): Promise<void> {
    await this.getItem({ Key: keys.healthProbe });
  }

  /**
   * Sets `fields` (plus any raw `sets`) if `condition` holds. Returns the updated attributes, or
   * undefined when the condition failed: the caller decides what a lost race means.
   */
  async setIf(
    key: { pk: string; sk: string },
    fields: Record<string, unknown>,
    condition: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> },
    sets: string[] = [],
  ): Promise<Record<string, unknown> | undefined> {
    const names: Record<string, string> = { ...condition.names };
    const values: Record<string, unknown> = { ...condition.values };
    const assignments = Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([field, value], i) => {
        names[`#f${i}`] = field;
        values[`:f${i}`] = value;
        return `#f${i} = :f${i}`;
      });
    const updated = await ifConditionHolds(
      this.updateItem({
        Key: key,
        UpdateExpression: `SET ${[...assignments, ...sets].join(", ")}`,
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
        ReturnValues: "UPDATED_NEW",
      }),
    );
    return updated && (updated.Attributes ?? {});
  }

  /**
   * One item, read consistently. The reads asked for in one turn of the event loop go out together,
   * as one BatchGetItem, after the last of them was asked: parallel executors starting a step read
   * the same two items with one request, and every read still sees each write done before it was asked.
   * `attributes`: read only these (the run's status between rounds, not the whole run).
   */
  getConsistent<T extends Item>(key: Key, attributes: string[] = []): Promise<T | undefined> {
    const projection = attributes.join(",");
    let reader = this.readers.get(projection);
    if (!reader) {
      reader = sameTurnBatcher((wanted: readonly Key[]) => this.getMany(wanted, attributes), 100); // BatchGetItem's limit
      this.readers.set(projection, reader);
    }
    return reader.load(key) as Promise<T | undefined>;
  }

  /**
   * The items at these keys (undefined where there is none), in the keys' order, read consistently
   * with BatchGetItem (100 keys at most; see untilProcessed). `attributes`: read only these.
   */
  async getMany(wanted: readonly Key[], attributes: string[] = []): Promise<(Item | undefined)[]> {
    const id = (key: Key) => `${key.pk}\n${key.sk}`;
    const found = new Map<string, Item>();
    const unique = [...new Map(wanted.map((key) => [id(key), { pk: key.pk, sk: key.sk }])).values()];
    // pk and sk are read too: they tell which key an item answers.
    const projection = attributes.length
      ? {
          ProjectionExpression: ["pk", "sk", ...attributes].map((_, i) => `#a${i}`).join(", "),
          ExpressionAttributeNames: Object.fromEntries(["pk", "sk", ...attributes].map((name, i) => [`#a${i}`, name])),
        }
      : {};
    await this.untilProcessed<Item>("BatchGetItem", unique, async (keysLeft) => {
      const [sdk, doc] = await this.sdk();
      const result: {
        Responses?: Record<string, Item[]>;
        UnprocessedKeys?: Record<string, { Keys?: Item[] }>;
      } = await doc.send(
        new sdk.BatchGetCommand({ RequestItems: { [this.name]: { Keys: keysLeft, ConsistentRead: true, ...projection } } }),
      );
      for (const item of result.Responses?.[this.name] ?? []) found.set(id(item as Key), item);
      return result.UnprocessedKeys?.[this.name]?.Keys;
    });
    return wanted.map((key) => found.get(id(key)));
  }

  /**
   * Writes (puts or deletes). The writes asked for in one turn of the event loop (parallel agents
   * flushing their journals) go out together, 25 to a request; resolves once all of these are written.
   */
  async batchWrite(requests: WriteRequest[]): Promise<void> {
    this.writer ??= sameTurnBatcher((batch: readonly WriteRequest[]) => this.writeTogether(batch));
    const writer = this.writer;
    await Promise.all(requests.map((request) => writer.load(request)));
  }

  /** Each request's outcome. A key written twice goes in a later wave, so the writes to one key keep their order. */
  private async writeTogether(requests: readonly WriteRequest[]): Promise<(true | Error)[]> {
    const waves: number[][][] = []; // wave → requests of 25 → indexes into `requests`
    const timesSeen = new Map<string, number>();
    requests.forEach((request, i) => {
      const key = writeKeyOf(request);
      const wave = timesSeen.get(key) ?? 0;
      timesSeen.set(key, wave + 1);
      waves[wave] ??= [];
      const chunks = waves[wave];
      const last = chunks.at(-1);
      if (last && last.length < 25) last.push(i);
      else chunks.push([i]);
    });
    const outcomes: (true | Error)[] = [];
    for (const chunks of waves) {
      await Promise.all(
        chunks.map(async (chunk) => {
          const write = (indexes: number[]) =>
            this.writeBatch(indexes.map((i) => requests[i])).then(
              () => true as const,
              (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
            );
          const outcome = await write(chunk);
          for (const i of chunk) outcomes[i] = outcome;
          // A request DynamoDB refuses (an item too large) fails only its own caller: the others are written one by one.
          if (outcome !== true && chunk.length > 1) await Promise.all(chunk.map(async (i) => (outcomes[i] = await write([i]))));
        }),
      );
    }
    return outcomes;
  }

  /** One BatchWriteItem (see untilProcessed). */
  private writeBatch(requests: WriteRequest[]): Promise<void> {
    return this.untilProcessed("BatchWriteItem", requests, async (left) => {
      const [sdk, doc] = await this.sdk();
      const result: { UnprocessedItems?: Item } = await doc.send(new sdk.BatchWriteCommand({ RequestItems: { [this.name]: left } }));
      return result.UnprocessedItems?.[this.name];
    });
  }

  /**
   * A batch request, sent again with what DynamoDB hands back unprocessed (it may, under load) after
   * a growing pause, until nothing is left; after `maxAttempts` sends the rest is an error.
   */
  private async untilProcessed<T>(
    operation: string,
    entries: T[],
    send: (left: T[]) => Promise<T[] | undefined>,
    maxAttempts = 8,
  ): Promise<void> {
    let left: T[] | undefined = entries;
    for (let attempt = 0; left?.length; attempt++) {
      if (attempt >= maxAttempts) throw new Error(`${operation} left ${left.length} item(s) unprocessed after ${maxAttempts} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      left = await send(left);
    }
  }

  /** All items under a key prefix, in key order (follows pagination). */
  async queryPrefix<T>(
    pk: string,
    skPrefix: string,
    options: { limit?: number; startSk?: string; attributes?: string[] } = {},
  ): Promise<T[]> {
    // Listings read only the attributes they show, not whole items.
    const projection = options.attributes?.length
      ? {
          ProjectionExpression: options.attributes.map((_, i) => `#a${i}`).join(", "),
          ExpressionAttributeNames: Object.fromEntries(options.attributes.map((name, i) => [`#a${i}`, name])),
        }
      : {};
    const items: T[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined = options.startSk ? { pk, sk: options.startSk } : undefined;
    do {
      const input: On<QueryCommandInput> = {
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk, ":prefix": skPrefix },
        ExclusiveStartKey: exclusiveStartKey,
        Limit: options.limit ? options.limit - items.length : undefined,
        ConsistentRead: true,
        ...projection,
      };
      const page = await this.query(input);
      items.push(...((page.Items ?? []) as T[]));
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey && (!options.limit || items.length < options.limit));
    return items;
  }
}

/**
 * A conditional write's result, or undefined when its condition did not hold: the one place that
 * knows DynamoDB says so with ConditionalCheckFailedException (known by its name: the SDK's class
 * is not loaded until the first request). Every other error is thrown.
 */
export async function ifConditionHolds<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if ((error as Error | undefined)?.name === "ConditionalCheckFailedException") return undefined;
    throw error;
  }
}

/** An item's own data: without the table's key and TTL attributes, and without `also`. */
export function itemData(item: Record<string, unknown>, ...also: string[]): Record<string, unknown> {
  const data = { ...item };
  for (const name of ["pk", "sk", "ttl", ...also]) delete data[name];
  return data;
}

/** Epoch seconds for the TTL attribute. */
export const expiresAt = (days: number, from = Date.now()) => Math.floor(from / 1000) + days * 86_400;

/** The item an update returned: one asking for ALL_NEW or UPDATED_NEW values always gets them. */
export function updatedItem<T>(updated: { Attributes?: T }): T {
  if (!updated.Attributes) throw new Error("DynamoDB returned no attributes for an update that asked for them.");
  return updated.Attributes;
}
