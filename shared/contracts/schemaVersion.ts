import type * as z from "zod";
import { StepwiseError } from "../errors.js";

/**
 * The schema version of what Stepwise saves and reads back across deploys: run, interrupt and tool
 * source records, and the state machine's state (the execution input and every step's output). A
 * run may wait for days while deploys come and go, and the API and the stream (never pinned to a
 * version) read what older code wrote. Code understands every version up to its own; state without
 * a version was written before versions were recorded, in the shape of version 1.
 */
export const SCHEMA_VERSION = 1;

/** Saved state this code cannot read: written by a newer version of Stepwise. */
export class SchemaVersionError extends StepwiseError {
  constructor(what: string, written: unknown) {
    super(
      `${what} was written with schema version ${String(written)}; this version of Stepwise reads schema versions 1 to ${SCHEMA_VERSION}. A newer deploy wrote it: read it with that deploy (runs finish on the versions they started on).`,
      {
        code: "unsupported_schema_version",
      },
    );
  }
}

/** Refuses, with both versions named, state written with a schema version this code does not know. */
export function checkSchemaVersion(what: string, written: unknown): void {
  if (written === undefined) return;
  if (!Number.isInteger(written) || (written as number) < 1 || (written as number) > SCHEMA_VERSION)
    throw new SchemaVersionError(what, written);
}

/** A saved record, read: its schema version checked first (a clear refusal), then its shape. */
export function readVersioned<S extends z.ZodType>(schema: S, what: string, data: Record<string, unknown>): z.infer<S> {
  checkSchemaVersion(what, data.schemaVersion);
  return schema.parse(data);
}
