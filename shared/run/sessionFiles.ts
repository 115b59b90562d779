import type { RunRecord } from "../contracts/run.js";
import { earlierTurns } from "../memory/session.js";
import type { FileMeta } from "../ports/files.js";
import type { Ports } from "../ports/index.js";

/** What a carried file's description starts with: the prompt shows where each file came from. */
const EARLIER_TURN = "From an earlier turn of this session";

/**
 * Files follow the session: a turn starts with the files of the session's last answered turn
 * (its uploads and outputs, and what that turn carried from the ones before), copied into this
 * run as uploads are, so every tool reads them by name. A file this run already has (its own
 * upload) keeps its name. Sessions are the tenant's own: another tenant's turns are never read.
 * Idempotent: a retried step copies nothing twice.
 */
export async function carrySessionFiles(ports: Pick<Ports, "sessions" | "files">, run: RunRecord): Promise<FileMeta[]> {
  if (run.newSession) return [];
  const messages = await ports.sessions.messages(run.tenantId, run.sessionId);
  const previous = earlierTurns(messages, run).at(-1)?.runId;
  if (!previous) return [];
  const [theirs, mine] = await Promise.all([ports.files.list(previous), ports.files.list(run.runId)]);
  const have = new Set(mine.map((f) => f.name));
  const carried = await Promise.all(
    theirs
      .filter((f) => !have.has(f.name))
      .map(async (meta) => {
        const file = await ports.files.get(previous, meta.name);
        if (!file) return undefined;
        const description = meta.description.startsWith(EARLIER_TURN)
          ? meta.description
          : `${EARLIER_TURN}: ${meta.description || "a file"}`;
        return ports.files.put(run.runId, meta.name, file.body, {
          contentType: meta.contentType,
          description,
          idempotencyKey: `${run.runId}:session-file:${meta.name}`,
        });
      }),
  );
  return carried.filter((f): f is FileMeta => f !== undefined);
}
