/**
 * One error module for the project. Caller mistakes are 4xx with a message the client sees;
 * our own faults are 5xx and keep their details in the logs.
 */
export class StepwiseError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details: unknown;

  constructor(message: string, options: { statusCode?: number; code?: string; details?: unknown; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.statusCode = options.statusCode ?? 500;
    this.code = options.code ?? "internal_error";
    this.details = options.details;
  }

  /** Whether the client may see the message and details (middy's `expose`). */
  get expose(): boolean {
    return this.statusCode < 500;
  }
}

export class BadRequestError extends StepwiseError {
  constructor(message: string, details?: unknown, code = "invalid_request") {
    super(message, { statusCode: 400, code, details });
  }
}

export class UnauthorizedError extends StepwiseError {
  constructor(message = "A valid API key is required: send 'Authorization: Bearer <key>'.") {
    super(message, { statusCode: 401, code: "unauthorized" });
  }
}

export class NotFoundError extends StepwiseError {
  constructor(message: string) {
    super(message, { statusCode: 404, code: "not_found" });
  }
}

export class ConflictError extends StepwiseError {
  constructor(message: string, details?: unknown) {
    super(message, { statusCode: 409, code: "conflict", details });
  }
}

/** Well-formed, but it cannot be done as asked (e.g. a tool source that cannot be reached). */
export class UnprocessableError extends StepwiseError {
  constructor(message: string, code = "unprocessable", details?: unknown) {
    super(message, { statusCode: 422, code, details });
  }
}

export class PayloadTooLargeError extends StepwiseError {
  constructor(message: string) {
    super(message, { statusCode: 413, code: "payload_too_large" });
  }
}

/** The model or a tool misbehaved in a way the run cannot recover from. */
export class AgentError extends StepwiseError {
  constructor(message: string, code = "agent_error", cause?: unknown) {
    super(message, { statusCode: 500, code, cause });
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
