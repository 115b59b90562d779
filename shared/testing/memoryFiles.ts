import { contentTypeOf, toBytes, type FileMeta, type FileStore, type PutFileOptions, type StoredFile } from "../ports/files.js";

/** The files port in memory, for unit tests of the core. */
export class MemoryFileStore implements FileStore {
  readonly files = new Map<string, StoredFile>();

  async put(runId: string, name: string, body: string | Uint8Array, options: PutFileOptions = {}): Promise<FileMeta> {
    const bytes = toBytes(body);
    const file: StoredFile = {
      name,
      description: options.description ?? "",
      contentType: options.contentType ?? contentTypeOf(name),
      bytes: bytes.byteLength,
      createdAt: new Date().toISOString(),
      body: bytes,
    };
    this.files.set(`${runId}/${name}`, file);
    const { body: _body, ...meta } = file;
    return meta;
  }

  async get(runId: string, name: string): Promise<StoredFile | undefined> {
    return this.files.get(`${runId}/${name}`);
  }

  async list(runId: string): Promise<FileMeta[]> {
    return [...this.files.entries()]
      .filter(([key]) => key.startsWith(`${runId}/`))
      .map(([, { body: _body, ...meta }]) => meta)
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}
