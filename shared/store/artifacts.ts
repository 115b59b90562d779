import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

export interface Artifact {
  name: string;
  content: string;
  description: string;
  bytes: number;
  createdAt: string;
}

/** Files a run produces (and whole tool outputs too long for the model). Items stay below 400 KB. */
export const MAX_ARTIFACT_BYTES = 350_000;

export class ArtifactStore {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  async put(runId: string, name: string, content: string, description = ""): Promise<Artifact> {
    const bytes = Buffer.byteLength(content);
    if (bytes > MAX_ARTIFACT_BYTES) throw new RangeError(`artifact ${name} is ${bytes} bytes; the limit is ${MAX_ARTIFACT_BYTES}`);
    const artifact: Artifact = { name, content, description, bytes, createdAt: new Date().toISOString() };
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.artifact(runId, name), ...artifact, ttl: expiresAt(this.retentionDays) },
      }),
    );
    return artifact;
  }

  async get(runId: string, name: string): Promise<Artifact | undefined> {
    const { Item } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.artifact(runId, name) }));
    return Item ? (Item as unknown as Artifact) : undefined;
  }

  async list(runId: string): Promise<Omit<Artifact, "content">[]> {
    const items = await this.table.queryPrefix<Artifact>(`RUN#${runId}`, keys.artifactPrefix);
    return items.map(({ name, description, bytes, createdAt }) => ({ name, description, bytes, createdAt }));
  }
}
