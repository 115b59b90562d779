/**
 * Trajectory matching: the tool calls a run made against the calls a case expects. Four modes
 * (strict: the same calls in the same order; unordered: the same calls in any order; subset: every
 * call made was expected; superset: every expected call was made, others too), arguments matched
 * exactly, by pattern or ignored, and partial credit as a score from 0 to 1.
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";

/** An argument's value matched by a regular expression (over its text, or its JSON when it is not a string). */
const PatternMask = z.strictObject({ $pattern: z.string() });
/** An argument whose value does not matter (it must be there). */
const IgnoreMask = z.strictObject({ $ignore: z.literal(true) });

export const ExpectedCall = z.strictObject({
  tool: z.string().min(1),
  /** Absent: the call's arguments are not looked at. Present: the same keys, each value equal or matching its mask. */
  arguments: z.record(z.string(), z.unknown()).optional(),
});
export type ExpectedCall = z.infer<typeof ExpectedCall>;

export const TrajectoryMode = z.enum(["strict", "unordered", "subset", "superset"]);
export type TrajectoryMode = z.infer<typeof TrajectoryMode>;

export const TrajectoryExpectation = z.strictObject({
  match: TrajectoryMode.default("strict"),
  calls: z.array(ExpectedCall),
  /** The score at or above which the check passes (default 1: every call as expected). */
  threshold: z.number().min(0).max(1).default(1),
});
export type TrajectoryExpectation = z.infer<typeof TrajectoryExpectation>;

/** A call the run made (a `tool.called` event). */
export interface ActualCall {
  tool: string;
  arguments: unknown;
}

export interface TrajectoryScore {
  score: number;
  passed: boolean;
  /** Why it fell short: the expected calls not made, the calls not expected, the order. */
  reasons: string[];
}

/** Whether one call fits one expectation. Bad patterns are caught when the dataset is read (see checkPatterns). */
export function callMatches(expected: ExpectedCall, actual: ActualCall): boolean {
  if (expected.tool !== actual.tool) return false;
  if (expected.arguments === undefined) return true;
  const args = actual.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return false;
  const given = args as Record<string, unknown>;
  const keys = new Set([...Object.keys(expected.arguments), ...Object.keys(given)]);
  for (const key of keys) {
    if (!(key in expected.arguments) || !(key in given)) return false;
    if (!valueMatches(expected.arguments[key], given[key])) return false;
  }
  return true;
}

function valueMatches(expected: unknown, actual: unknown): boolean {
  if (IgnoreMask.safeParse(expected).success) return true;
  const pattern = PatternMask.safeParse(expected);
  if (pattern.success) return new RegExp(pattern.data.$pattern).test(typeof actual === "string" ? actual : JSON.stringify(actual));
  return isDeepStrictEqual(expected, actual);
}

/** The patterns of a trajectory that do not compile, as messages (empty: all fine). */
export function badPatterns(calls: ExpectedCall[]): string[] {
  const problems: string[] = [];
  for (const call of calls) {
    for (const [key, value] of Object.entries(call.arguments ?? {})) {
      const pattern = PatternMask.safeParse(value);
      if (!pattern.success) continue;
      try {
        new RegExp(pattern.data.$pattern);
      } catch (error) {
        problems.push(`${call.tool}.${key}: ${(error as Error).message}`);
      }
    }
  }
  return problems;
}

export function scoreTrajectory(expectation: TrajectoryExpectation, actual: ActualCall[]): TrajectoryScore {
  const { match, calls: expected, threshold } = expectation;
  const pairs = match === "strict" ? inOrderPairs(expected, actual) : anyOrderPairs(expected, actual);
  const missing = expected.filter((_, i) => !pairs.some(([e]) => e === i));
  const extra = actual.filter((_, i) => !pairs.some(([, a]) => a === i));
  // The share of the calls that count in this mode which found their partner.
  const counted = {
    strict: Math.max(expected.length, actual.length),
    unordered: Math.max(expected.length, actual.length),
    subset: actual.length,
    superset: expected.length,
  }[match];
  const score = counted === 0 ? 1 : pairs.length / counted;
  const reasons: string[] = [];
  if (match !== "subset") for (const call of missing) reasons.push(`expected call not made: ${describe(call)}`);
  if (match !== "superset") for (const call of extra) reasons.push(`unexpected call: ${describe(call)}`);
  if (score >= 1) return { score, passed: true, reasons: [] };
  if (match === "strict" && expected.length === actual.length && anyOrderPairs(expected, actual).length === expected.length) {
    return {
      score,
      passed: score >= threshold,
      reasons: [`the expected calls were made in another order: ${actual.map((c) => c.tool).join(", ")}`],
    };
  }
  return { score, passed: score >= threshold, reasons };
}

/** The longest run of expected calls made in the same order (a longest common subsequence), as index pairs. */
function inOrderPairs(expected: ExpectedCall[], actual: ActualCall[]): [number, number][] {
  const fits = expected.map((e) => actual.map((a) => callMatches(e, a)));
  // best[i][j]: the most pairs among expected[i…] and actual[j…].
  const best = Array.from({ length: expected.length + 1 }, () => new Array<number>(actual.length + 1).fill(0));
  const at = (i: number, j: number) => best[i]?.[j] ?? 0;
  for (let i = expected.length - 1; i >= 0; i--) {
    for (let j = actual.length - 1; j >= 0; j--) {
      (best[i] as number[])[j] = fits[i]?.[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < expected.length && j < actual.length; ) {
    if (fits[i]?.[j] && at(i, j) === at(i + 1, j + 1) + 1) pairs.push([i++, j++]);
    else if (at(i + 1, j) >= at(i, j + 1)) i++;
    else j++;
  }
  return pairs;
}

/**
 * The most expected calls that can each be paired with a different call made, in any order (a
 * maximum bipartite matching: with masks, one call may fit several expectations).
 */
function anyOrderPairs(expected: ExpectedCall[], actual: ActualCall[]): [number, number][] {
  const fits = expected.map((e) => actual.map((a) => callMatches(e, a)));
  const partnerOf = new Array<number>(actual.length).fill(-1);
  const tryPair = (e: number, seen: boolean[]): boolean => {
    for (let a = 0; a < actual.length; a++) {
      if (seen[a] || !fits[e]?.[a]) continue;
      seen[a] = true;
      const partner = partnerOf[a] ?? -1;
      if (partner === -1 || tryPair(partner, seen)) {
        partnerOf[a] = e;
        return true;
      }
    }
    return false;
  };
  for (let e = 0; e < expected.length; e++) tryPair(e, new Array<boolean>(actual.length).fill(false));
  return partnerOf.flatMap((e, a) => (e === -1 ? [] : [[e, a] as [number, number]]));
}

function describe(call: { tool: string; arguments?: unknown }): string {
  return call.arguments === undefined ? call.tool : `${call.tool} ${JSON.stringify(call.arguments)}`;
}
