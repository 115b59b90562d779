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

/**
 * Why a state machine step failed: the Lambda's errorType (the error's `name`), so the state
 * machine's Retry and Catch match on it. Retryable codes are retried with backoff and jitter (steps
 * replay their journal, so repeating one is safe); the others fail the run at once.
 */
export const StepErrorCode = {
  /** The model was busy or unreachable after the client's own retries (429, 5xx, connection, timeout). */
  ModelUnavailable: "Stepwise.ModelUnavailable",
  /** An AWS service throttled or failed briefly (DynamoDB throughput, SQS, Step Functions 5xx). */
  AwsUnavailable: "Stepwise.AwsUnavailable",
  /** The Lambda's time ran out during a model call; the next attempt replays the journal and goes on. */
  OutOfTime: "Stepwise.OutOfTime",
  /** The model refused the request (4xx other than 408/409/429): the same request fails again. */
  ModelRejected: "Stepwise.ModelRejected",
  /** The step's input or the run's data does not fit (validation). */
  InvalidInput: "Stepwise.InvalidInput",
  /** The agent could not go on (e.g. the model broke the JSON contract three times in a row). */
  AgentFailed: "Stepwise.AgentFailed",
  /** Anything else: a fault of ours, not retried. */
  Internal: "Stepwise.Internal",
  /** A guardrail check blocked the text an agent wrote: the run ends `blocked` ("Record failure"). */
  GuardrailBlocked: "Stepwise.GuardrailBlocked",
} as const;
export type StepErrorCode = (typeof StepErrorCode)[keyof typeof StepErrorCode];

/** The codes the state machine retries. */
export const RETRYABLE_STEP_ERRORS: readonly StepErrorCode[] = [
  StepErrorCode.ModelUnavailable,
  StepErrorCode.AwsUnavailable,
  StepErrorCode.OutOfTime,
];

/**
 * The codes no later attempt can change (the run's own data is the problem): "Record failure"
 * ends the run with them. Every other error, once its retries are spent, fails the execution at
 * the step itself, so `POST /v1/runs/{id}/resume` (RedriveExecution) can run that step again after
 * the cause is fixed (the model back, a key or quota corrected, a bug deployed away).
 */
export const FINAL_STEP_ERRORS: readonly StepErrorCode[] = [
  StepErrorCode.InvalidInput,
  StepErrorCode.AgentFailed,
  StepErrorCode.GuardrailBlocked,
];

export class StepError extends StepwiseError {
  declare readonly code: StepErrorCode;

  constructor(code: StepErrorCode, message: string, cause?: unknown) {
    super(message, { statusCode: 500, code, cause });
    this.name = code;
  }

  get retryable(): boolean {
    return RETRYABLE_STEP_ERRORS.includes(this.code);
  }
}

/** AWS SDK errors that mean "try again later". */
const AWS_TRANSIENT =
  /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|TooManyRequests|ServiceUnavailable|InternalServerError|InternalFailure|TransactionConflict/;

/** Any error a step throws, as a StepError with the code the state machine matches on. */
export function toStepError(error: unknown): StepError {
  if (error instanceof StepError) return error;
  const message = errorMessage(error);
  const aws = error as { $metadata?: unknown; $fault?: string; $retryable?: unknown; name?: string };
  if (aws && typeof aws === "object" && aws.$metadata !== undefined) {
    const transient = aws.$fault === "server" || aws.$retryable !== undefined || AWS_TRANSIENT.test(aws.name ?? "");
    return new StepError(transient ? StepErrorCode.AwsUnavailable : StepErrorCode.Internal, `${aws.name}: ${message}`, error);
  }
  if (error instanceof Error && error.name === "ZodError") return new StepError(StepErrorCode.InvalidInput, message, error);
  if (error instanceof AgentError) return new StepError(StepErrorCode.AgentFailed, message, error);
  if (error instanceof StepwiseError && error.expose) return new StepError(StepErrorCode.InvalidInput, message, error);
  return new StepError(StepErrorCode.Internal, error instanceof Error ? `${error.name}: ${message}` : message, error);
}
