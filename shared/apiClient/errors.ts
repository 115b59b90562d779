/** What can go wrong talking to the API, for the CLI and the web console alike. */

/** The API answered with a 4xx or 5xx; `code` and `message` come from its `{error: {…}}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The API key (or stream token) was refused. */
  get isAuth(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The API could not be reached, or answered with something that is not the API. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

/** The ApiError for an answer's status and body: the API's own code and message, else the start of the body. */
export function apiError(status: number, body: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    // not JSON: a proxy's page, a storage service's XML
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.message === "string") {
    return new ApiError(status, typeof error.code === "string" ? error.code : `http_${status}`, error.message, error.details);
  }
  const snippet = body.trim().slice(0, 200);
  return new ApiError(status, `http_${status}`, `HTTP ${status}${snippet ? `: ${snippet}` : ""}`);
}

/** A fetch that failed before an answer: where it went and why. */
export function connectionError(url: string, error: unknown): ConnectionError {
  const where = url ? ` at ${url}` : "";
  return new ConnectionError(`Could not reach the Stepwise API${where} (${describeFetchError(error)}).`, { cause: error });
}

/** Why a fetch failed, in a few words. Node's fetch hides the reason in `cause`: ECONNREFUSED, ENOTFOUND, a timeout… */
export function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return "timed out";
  const cause = error.cause as { code?: string; message?: string } | undefined;
  // System errors say it best by code (ECONNREFUSED, ENOTFOUND); undici's own by message.
  if (cause?.code && /^E[A-Z]+$/.test(cause.code)) return cause.code;
  if (cause?.message) return cause.message;
  return error.message;
}
