import * as z from "zod";
import { Id } from "../../shared/contracts/api.js";
import { BadRequestError } from "../../shared/errors.js";

/** Ids the service mints (runs, interrupts, webhook deliveries) and ids clients choose (sessions). */
const MintedId = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, "1 to 80 letters, digits, '_' or '-'");

/**
 * Every named group of a route's pattern is validated here, by its name, before a handler sees it
 * (and so before it reaches a DynamoDB key). A name not listed gets `AnyPathParam`: routes added
 * later are covered without per-route code; list a name to make it stricter.
 */
export const PATH_PARAMS: Record<string, z.ZodType<string>> = {
  runId: MintedId,
  interruptId: MintedId,
  deliveryId: MintedId,
  sessionId: Id,
};

/** At most 256 visible ASCII characters (percent-encoded as sent), far below DynamoDB's 1 KB sort key. */
export const AnyPathParam = z.string().regex(/^[\x21-\x7e]{1,256}$/, "at most 256 visible ASCII characters");

export function validatePathParams(groups: Record<string, string | undefined> = {}): Record<string, string> {
  const params: Record<string, string> = {};
  const issues: { path: string; message: string }[] = [];
  for (const [name, value] of Object.entries(groups)) {
    const result = (PATH_PARAMS[name] ?? AnyPathParam).safeParse(value ?? "");
    if (result.success) params[name] = result.data;
    else issues.push({ path: `path.${name}`, message: result.error.issues[0]?.message ?? "invalid" });
  }
  if (issues.length)
    throw new BadRequestError(`Invalid path: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, issues, "validation_failed");
  return params;
}
