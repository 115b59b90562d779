import { CreateRunRequest } from "../contracts/api.js";
import type { A2APush, RunRecord } from "../contracts/run.js";
import { BadRequestError, StepwiseError } from "../errors.js";
import { utf8Bytes } from "../text/bytes.js";
import type { Links } from "../views/runView.js";
import { type RunSetupPorts, resolveRunSetup } from "./runSetup.js";
import { type SubmitPorts, submitRun } from "./submit.js";

/** What accepting a run touches: submitting's ports, the setup it reads, and the tenant's list of sessions. */
export type AcceptPorts = SubmitPorts &
  RunSetupPorts & {
    listings: { touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void> };
  };

/** A file that came inside the request (an A2A file part): uploaded once the run is known to be accepted. */
export interface InlineFile {
  name: string;
  body: Uint8Array;
  contentType: string;
}

export interface AcceptOptions {
  links: Links;
  idempotencyKey?: string;
  /** An A2A client's push config, kept with the run's webhook. */
  a2aPush?: A2APush;
  inlineFiles?: readonly InlineFile[];
  /** The door's name for a field of the request (AG-UI's threadId is the sessionId), in refusals. */
  fieldName?: (path: string) => string;
}

/** A run input longer than the stack's limit (MAX_INPUT_BYTES, in UTF-8 bytes): 413 at every door. */
export class InputTooLongError extends StepwiseError {
  constructor(bytes: number, limit: number) {
    super(`input has ${bytes} bytes (UTF-8); the limit is ${limit} bytes`, {
      statusCode: 413,
      code: "payload_too_large",
      details: { bytes, limit },
    });
  }
}

/**
 * The one way a run starts, whichever door it came through (REST, MCP, A2A, AG-UI): the request is
 * checked against the run contract and the input limit, the saved agent and the tenant's settings
 * are applied (its busy-session default among them), the files that came inline are uploaded, and
 * the run is submitted (its session claimed, its execution started or queued). Everything is
 * checked before anything is written: a refused run changes nothing. Errors are Stepwise's; each
 * door turns them into its protocol's.
 */
export async function acceptRun(
  ports: AcceptPorts,
  tenantId: string,
  candidate: unknown,
  options: AcceptOptions,
): Promise<{ run: RunRecord; replayed: boolean }> {
  const parsed = CreateRunRequest.safeParse(candidate);
  if (!parsed.success) {
    const name = options.fieldName ?? ((path: string) => path || "input");
    const details = parsed.error.issues.map((issue) => ({ path: name(issue.path.join(".")), message: issue.message }));
    throw new BadRequestError(
      `The request does not make a run: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
      details,
      "validation_failed",
    );
  }
  const limit = ports.settings.limits.maxInputBytes;
  const bytes = utf8Bytes(parsed.data.input);
  if (bytes > limit) throw new InputTooLongError(bytes, limit);
  const { request, ...setup } = await resolveRunSetup(ports, tenantId, parsed.data);
  const uploads = await Promise.all(
    (options.inlineFiles ?? []).map((f) => ports.transfers.upload(tenantId, f.name, f.body, f.contentType)),
  );
  const files = [...(request.files ?? []), ...uploads.map((u) => u.fileId)];
  const { run, replayed } = await submitRun(
    ports,
    tenantId,
    { ...request, ...(files.length ? { files } : {}) },
    {
      links: options.links,
      idempotencyKey: options.idempotencyKey,
      a2aPush: options.a2aPush,
      ...setup,
    },
  );
  if (!replayed) await ports.listings.touchSession(tenantId, run.sessionId, run.runId, run.createdAt);
  return { run, replayed };
}
