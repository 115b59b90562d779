/** The process's exit codes. HELP lists them for users; main.ts picks one for each kind of error. */
export const EXIT = {
  /** The run succeeded (or help or `get` printed what was asked). */
  ok: 0,
  /** The run failed, timed out or was cancelled (or the CLI itself hit an unexpected error). */
  runFailed: 1,
  /** A usage error, or a request the API refused as invalid (e.g. an unknown run id). */
  usage: 2,
  /** No connection, a missing or refused API key, or a 429 / 5xx answer. */
  connection: 3,
  /** Detached with Ctrl-C; the run goes on. */
  detached: 130,
} as const;
