import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_SCHEDULE,
  FAST_RETRY_SCHEDULE,
  MAX_ATTEMPTS,
  nextAttemptDelayMs,
  parseRetryAfterMs,
  type RetrySchedule,
} from "../../../../shared/webhooks/retryPolicy.js";

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const lowest = () => 0;
const highest = () => 0.999999;
const middle = () => 0.5;

/** The delay before retry n when nothing jitters it. */
const ceiling = (n: number, s: RetrySchedule = DEFAULT_RETRY_SCHEDULE) =>
  Math.min(s.maxDelayMs, s.firstRetryDelayMs * s.backoffFactor ** (n - 1));

const delay = (attempt: number, random: () => number, status = 500): number => {
  const next = nextAttemptDelayMs(attempt, { status }, random);
  if (typeof next !== "number") throw new Error(`expected a delay, got ${next}`);
  return next;
};

describe("nextAttemptDelayMs", () => {
  it("disables the endpoint on 410 Gone, whatever the attempt", () => {
    expect(nextAttemptDelayMs(1, { status: 410 })).toBe("disable");
    expect(nextAttemptDelayMs(MAX_ATTEMPTS, { status: 410 })).toBe("disable");
  });

  it("gives up after MAX_ATTEMPTS attempts in all", () => {
    expect(MAX_ATTEMPTS).toBe(DEFAULT_RETRY_SCHEDULE.maxAttempts);
    expect(typeof nextAttemptDelayMs(MAX_ATTEMPTS - 1, { status: 500 })).toBe("number");
    expect(nextAttemptDelayMs(MAX_ATTEMPTS, { status: 500 })).toBe("give_up");
    expect(nextAttemptDelayMs(MAX_ATTEMPTS, { status: 429, retryAfter: "5" })).toBe("give_up");
    expect(nextAttemptDelayMs(MAX_ATTEMPTS + 3)).toBe("give_up");
  });

  it("backs off exponentially from 5 s, capped at 10 h", () => {
    const fixed = { ...DEFAULT_RETRY_SCHEDULE, jitter: 0 };
    const delays = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => nextAttemptDelayMs(i + 1, { status: 503 }, middle, fixed));
    expect(delays).toEqual([5, 25, 125, 625, 3125, 15625, 36000, 36000, 36000].map((s) => s * SECOND));
  });

  it("jitters each delay within [ceiling × (1 − jitter), ceiling], drawn from the injected random", () => {
    const jitter = DEFAULT_RETRY_SCHEDULE.jitter;
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const top = ceiling(attempt);
      expect(delay(attempt, lowest)).toBe(Math.round(top * (1 - jitter)));
      expect(delay(attempt, middle)).toBe(Math.round(top * (1 - jitter / 2)));
      expect(delay(attempt, highest)).toBeLessThanOrEqual(top);
      expect(delay(attempt, highest)).toBeGreaterThan(top * 0.999);
    }
  });

  it("grows with each attempt until the cap, even from the worst draws", () => {
    for (let attempt = 1; attempt < 6; attempt++) {
      expect(delay(attempt + 1, lowest)).toBeGreaterThan(delay(attempt, highest));
    }
    expect(delay(MAX_ATTEMPTS - 1, middle)).toBe(delay(MAX_ATTEMPTS - 2, middle));
  });

  it("spans more than a day before giving up, even with the shortest draws", () => {
    const total = (random: () => number) =>
      Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => delay(i + 1, random)).reduce((a, b) => a + b, 0);
    expect(total(lowest)).toBeGreaterThan(24 * HOUR);
    expect(total(highest)).toBeLessThan(48 * HOUR);
  });

  it("offers full jitter as an option", () => {
    const full = { ...DEFAULT_RETRY_SCHEDULE, jitter: 1 };
    expect(nextAttemptDelayMs(3, { status: 500 }, lowest, full)).toBe(0);
    expect(nextAttemptDelayMs(3, { status: 500 }, middle, full)).toBe(62.5 * SECOND);
  });

  it("retries network failures (no response) like any other failure", () => {
    expect(nextAttemptDelayMs(1, undefined, lowest)).toBe(3750);
    expect(nextAttemptDelayMs(1, {}, lowest)).toBe(3750);
  });

  it.each([429, 502, 503, 504])("honours Retry-After in seconds on %i", (status) => {
    expect(nextAttemptDelayMs(1, { status, retryAfter: "120" }, middle)).toBe(120 * SECOND);
    expect(nextAttemptDelayMs(2, { status, retryAfter: " 3600 " }, middle)).toBe(HOUR);
  });

  it("honours Retry-After as an HTTP-date", () => {
    const inAnHour = new Date(Date.now() + HOUR).toUTCString();
    const waited = nextAttemptDelayMs(1, { status: 429, retryAfter: inAnHour }, middle);
    expect(waited).toBeGreaterThan(HOUR - 5 * SECOND); // the date has whole seconds
    expect(waited).toBeLessThanOrEqual(HOUR);
  });

  it("clamps Retry-After to [1 s, 24 h]", () => {
    const pastDate = new Date(Date.now() - HOUR).toUTCString();
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: "0" }, lowest)).toBe(3750); // backoff is already above 1 s
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: "0" }, lowest, { ...DEFAULT_RETRY_SCHEDULE, firstRetryDelayMs: 10 })).toBe(
      SECOND,
    );
    expect(nextAttemptDelayMs(1, { status: 503, retryAfter: pastDate }, lowest, { ...DEFAULT_RETRY_SCHEDULE, firstRetryDelayMs: 10 })).toBe(
      SECOND,
    );
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: String(7 * 24 * 3600) }, lowest)).toBe(24 * HOUR);
  });

  it("treats Retry-After as a lower bound: the backoff still applies", () => {
    expect(nextAttemptDelayMs(8, { status: 429, retryAfter: "1" }, lowest)).toBe(delay(8, lowest));
  });

  it("ignores an unreadable Retry-After, and Retry-After on responses that do not throttle", () => {
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: "soon" }, lowest)).toBe(3750);
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: "-5" }, lowest)).toBe(3750);
    expect(nextAttemptDelayMs(1, { status: 500, retryAfter: "120" }, lowest)).toBe(3750);
    expect(nextAttemptDelayMs(1, { status: 302, retryAfter: "120" }, lowest)).toBe(3750);
  });

  it("refuses an attempt number that is not a whole number from 1", () => {
    for (const attempt of [0, -1, 1.5, Number.NaN]) expect(() => nextAttemptDelayMs(attempt)).toThrow(RangeError);
  });

  it("has a fast schedule of milliseconds with the same number of attempts", () => {
    const fast = Array.from({ length: MAX_ATTEMPTS }, (_, i) => nextAttemptDelayMs(i + 1, { status: 500 }, highest, FAST_RETRY_SCHEDULE));
    expect(fast.at(-1)).toBe("give_up");
    const delays = fast.slice(0, -1) as number[];
    expect(delays.every((d) => typeof d === "number" && d <= FAST_RETRY_SCHEDULE.maxDelayMs)).toBe(true);
    expect(delays.reduce((a, b) => a + b, 0)).toBeLessThan(SECOND);
    expect(nextAttemptDelayMs(1, { status: 429, retryAfter: "3600" }, lowest, FAST_RETRY_SCHEDULE)).toBe(
      FAST_RETRY_SCHEDULE.maxRetryAfterMs,
    );
    expect(nextAttemptDelayMs(2, { status: 410 }, lowest, FAST_RETRY_SCHEDULE)).toBe("disable");
  });

  it("always yields a whole, finite delay within [0, cap] (property)", () => {
    const schedule = fc.record({
      maxAttempts: fc.integer({ min: 2, max: 30 }),
      firstRetryDelayMs: fc.integer({ min: 1, max: HOUR }),
      backoffFactor: fc.double({ min: 1, max: 20, noNaN: true }),
      maxDelayMs: fc.integer({ min: 1, max: 48 * HOUR }),
      jitter: fc.double({ min: 0, max: 1, noNaN: true }),
      minRetryAfterMs: fc.integer({ min: 0, max: 10 * SECOND }),
      maxRetryAfterMs: fc.integer({ min: 10 * SECOND, max: 48 * HOUR }),
    });
    const response = fc.option(
      fc.record(
        {
          status: fc.oneof(
            fc.constantFrom(429, 500, 502, 503, 504, 302, 404),
            fc.integer({ min: 100, max: 599 }).filter((s) => s !== 410),
          ),
          retryAfter: fc.oneof(
            fc.nat({ max: 10 ** 7 }).map(String),
            fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
            fc.string(),
          ),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        schedule,
        fc.integer({ min: 1, max: 1000 }),
        response,
        fc.oneof(
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          fc.constantFrom(Number.NaN, -1, 2, Number.POSITIVE_INFINITY),
        ),
        (s, attempt, res, draw) => {
          const next = nextAttemptDelayMs(attempt, res, () => draw, s);
          if (attempt >= s.maxAttempts) {
            expect(next).toBe("give_up");
            return;
          }
          expect(typeof next).toBe("number");
          const ms = next as number;
          expect(Number.isInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(Math.max(s.maxDelayMs, res?.retryAfter ? s.maxRetryAfterMs : 0));
          if (res?.retryAfter === undefined) expect(ms).toBeLessThanOrEqual(s.maxDelayMs);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  it.each([
    ["0", 0],
    ["30", 30 * SECOND],
    ["Wed, 01 Jan 2025 00:02:00 GMT", 120 * SECOND],
    ["Tue, 31 Dec 2024 23:59:00 GMT", -60 * SECOND],
  ])("reads %j", (value, expected) => {
    expect(parseRetryAfterMs(value, now)).toBe(expected);
  });

  it.each(["", "soon", "1.5", "-5", "12e3", "+30"])("does not read %j", (value) => {
    expect(parseRetryAfterMs(value, now)).toBeUndefined();
  });
});
