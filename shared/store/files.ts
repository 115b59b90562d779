import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { contentTypeOf, toBytes, type FileMeta, type FileStore, type PutFileOptions, type StoredFile } from "../ports/files.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

/** Items stay below DynamoDB's 400 KB. */
export const MAX_TABLE_FILE_BYTES = 350_000;

/** The files port on the table: bytes and metadata in one item per file. */
export class TableFileStore implements FileStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async put(runId: string, name: string, body: string | Uint8Array, options: PutFileOptions = {}): Promise<FileMeta> {
    const bytes = toBytes(body);
    if (bytes.byteLength > MAX_TABLE_FILE_BYTES) throw new RangeError(`file ${name} is ${bytes.byteLength} bytes; the limit is ${MAX_TABLE_FILE_BYTES}`);
    const meta: FileMeta = {
      name,
      description: options.description ?? "",
      contentType: options.contentType ?? contentTypeOf(name),
      bytes: bytes.byteLength,
      createdAt: new Date().toISOString(),
    };
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.file(runId, name), ...meta, body: bytes, ttl: expiresAt(this.retentionDays) },
      }),
    );
    return meta;
  }

  async get(runId: string, name: string): Promise<StoredFile | undefined> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.file(runId, name) }));
    if (!Item) return undefined;
    // Files written before binary bodies kept their text in `content`.
    const body: Uint8Array = Item.body ?? toBytes(String(Item.content ?? ""));
    return { ...metaOf(Item), body };
  }

  async list(runId: string): Promise<FileMeta[]> {
    const items = await this.table.queryPrefix<Record<string, any>>(`RUN#${runId}`, keys.filePrefix, {
      attributes: ["name", "description", "contentType", "bytes", "createdAt"],
    });
    return items.map(metaOf);
  }
}

function metaOf(item: Record<string, any>): FileMeta {
  return {
    name: item.name,
    description: item.description ?? "",
    contentType: item.contentType ?? contentTypeOf(item.name),
    bytes: Number(item.bytes ?? 0),
    createdAt: item.createdAt,
  };
}
