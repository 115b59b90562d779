/**
 * When to try a failed webhook delivery again. Only a 2xx is a success (the caller decides that);
 * this module is asked after a failure: wait this many ms, give up (dead-letter), or disable the
 * endpoint (410 Gone: the receiver asked us to stop).
 */

const SECOND = 1000;
const HOUR = 3600 * SECOND;

export interface RetrySchedule {
  /** Attempts in all, the first delivery included. */
  maxAttempts: number;
  /** Delay before the first retry; retry n waits firstRetryDelayMs * backoffFactor^(n-1), capped. */
  firstRetryDelayMs: number;
  backoffFactor: number;
  maxDelayMs: number;
  /** The random share of each delay: 0 = fixed schedule, 1 = full jitter (anywhere in [0, delay]). */
  jitter: number;
  /** Bounds on a receiver's Retry-After. */
  minRetryAfterMs: number;
  maxRetryAfterMs: number;
}

/**
 * 5 s, 25 s, 2 min, 10 min, 52 min, 4.3 h, then 10 h: ten attempts spanning 35 h, never less than
 * 26.6 h after jitter. Jitter is a quarter, not full: full jitter could squeeze the schedule into a
 * few hours and miss the receiver's recovery from a day-long outage; a quarter of a 10-hour delay
 * still spreads synchronized retries over 2.5 hours.
 */
export const DEFAULT_RETRY_SCHEDULE: Readonly<RetrySchedule> = {
  maxAttempts: 10,
  firstRetryDelayMs: 5 * SECOND,
  backoffFactor: 5,
  maxDelayMs: 10 * HOUR,
  jitter: 0.25,
  minRetryAfterMs: 1 * SECOND,
  maxRetryAfterMs: 24 * HOUR,
};

/** The same shape in milliseconds, for tests and the local stack. */
export const FAST_RETRY_SCHEDULE: Readonly<RetrySchedule> = {
  ...DEFAULT_RETRY_SCHEDULE,
  firstRetryDelayMs: 10,
  backoffFactor: 2,
  maxDelayMs: 100,
  minRetryAfterMs: 1,
  maxRetryAfterMs: 200,
};

export const MAX_ATTEMPTS = DEFAULT_RETRY_SCHEDULE.maxAttempts;

/** Responses that mean "slow down": their Retry-After is honoured. */
const THROTTLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export type NextAttempt = number | "give_up" | "disable";

export interface FailedResponse {
  status?: number;
  retryAfter?: string;
}

/**
 * After failed attempt number `attempt` (1 = the first delivery): how long to wait before the next
 * one, or "give_up" after the last, or "disable" on 410 Gone. A throttling response's Retry-After
 * is a lower bound: the backoff still applies, so a receiver cannot use up the attempts in seconds.
 */
export function nextAttemptDelayMs(
  attempt: number,
  response?: FailedResponse,
  random: () => number = Math.random,
  schedule: Readonly<RetrySchedule> = DEFAULT_RETRY_SCHEDULE,
): NextAttempt {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a whole number from 1, got ${attempt}`);
  if (response?.status === 410) return "disable";
  if (attempt >= schedule.maxAttempts) return "give_up";

  const backoff = backoffDelayMs(attempt, random, schedule);
  const retryAfter =
    response?.status !== undefined && THROTTLE_STATUSES.has(response.status) && response.retryAfter
      ? parseRetryAfterMs(response.retryAfter)
      : undefined;
  if (retryAfter === undefined) return backoff;
  return Math.max(backoff, clamp(retryAfter, schedule.minRetryAfterMs, schedule.maxRetryAfterMs));
}

/** The jittered exponential delay before retry number `attempt`, in [0, maxDelayMs]. */
function backoffDelayMs(attempt: number, random: () => number, schedule: Readonly<RetrySchedule>): number {
  const ceiling = Math.min(schedule.maxDelayMs, schedule.firstRetryDelayMs * schedule.backoffFactor ** (attempt - 1));
  const jitter = clamp(schedule.jitter, 0, 1);
  const draw = random();
  const share = Number.isFinite(draw) ? clamp(draw, 0, 1) : 1;
  return Math.round(ceiling * (1 - jitter + jitter * share));
}

/** Retry-After in ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined if unreadable. */
export function parseRetryAfterMs(value: string, nowMs: number = Date.now()): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND;
  // An HTTP-date always names the weekday and month; a bare number-like string is not a date.
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date - nowMs;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
