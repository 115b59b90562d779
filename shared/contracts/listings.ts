import * as z from "zod";
import { Id } from "./api.js";
import { RunStatus } from "./run.js";

/** A page of a listing: at most this many items, this many when the client does not say. */
const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;

const Limit = z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE);
const Cursor = z.string().min(1).max(512);

/** `GET /v1/runs`: newest first. */
export const RunsQuery = z.strictObject({
  status: RunStatus.optional(),
  sessionId: Id.optional(),
  limit: Limit,
  cursor: Cursor.optional(),
});
export type RunsQuery = z.infer<typeof RunsQuery>;

/** `GET /v1/sessions`: newest first. */
export const SessionsQuery = z.strictObject({ limit: Limit, cursor: Cursor.optional() });
export type SessionsQuery = z.infer<typeof SessionsQuery>;
