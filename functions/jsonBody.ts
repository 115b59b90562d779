import type * as z from "zod";
import { MAX_NESTING_LEVELS, nestedDeeperThan } from "../shared/contracts/nesting.js";
import { BadRequestError, StepwiseError } from "../shared/errors.js";
import { bodyTooLarge, MAX_JSON_BODY_BYTES } from "./bodyLimits.js";
import { type HttpEvent, header } from "./http.js";

/** A request's JSON body and query, checked against their zod contracts: every door's bad input is a clear 4xx. */
export function parseBody<S extends z.ZodType>(event: HttpEvent, schema: S, maxBytes = MAX_JSON_BODY_BYTES): z.infer<S> {
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body) : "";
  if (Buffer.byteLength(raw) > maxBytes) throw bodyTooLarge(maxBytes);
  const type = header(event, "content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new StepwiseError("Send the body as JSON with 'Content-Type: application/json'.", {
      statusCode: 415,
      code: "unsupported_media_type",
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new BadRequestError(`The body is not valid JSON: ${(error as Error).message}`, undefined, "invalid_json");
  }
  if (nestedDeeperThan(value)) {
    throw new BadRequestError(
      `The body is nested more than ${MAX_NESTING_LEVELS} levels deep, the most that can be stored: at most ${MAX_NESTING_LEVELS - 1} objects or arrays within each other (the body's own counts), around their values.`,
      undefined,
      "nesting_too_deep",
    );
  }
  return validate(schema, value, "body");
}

export function parseQuery<S extends z.ZodType>(event: HttpEvent, schema: S): z.infer<S> {
  return validate(schema, event.queryStringParameters ?? {}, "query");
}

function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const details = result.error.issues.map((issue) => ({
      path: [where, ...issue.path.map(String)].join("."),
      message: issue.message,
      ...("keys" in issue ? { keys: issue.keys } : {}),
    }));
    throw new BadRequestError(
      `Invalid ${where}: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
      details,
      "validation_failed",
    );
  }
  return result.data;
}
