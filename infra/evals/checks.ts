/**
 * Checks on a run's final answer: phrases it must (not) contain, regular expressions, a JSON
 * schema, and an LLM judge with a rubric. Each check yields a score from 0 to 1 and, when it fails,
 * a reason a person can act on.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import type { Judge } from "./judge.js";

const Pattern = z.union([z.string(), z.strictObject({ pattern: z.string(), flags: z.string().optional() })]);

export const AnswerExpectation = z.strictObject({
  /** Phrases the answer contains, as written. */
  contains: z.array(z.string().min(1)).optional(),
  /** Phrases it must not contain. */
  notContains: z.array(z.string().min(1)).optional(),
  /** Regular expressions (JavaScript syntax) the answer matches: a source, or {pattern, flags}. */
  regex: z.array(Pattern).optional(),
  /** A JSON Schema (2020-12) the answer, parsed as JSON (or its first ```json block), is valid against. */
  jsonSchema: z.record(z.string(), z.unknown()).optional(),
  /** An LLM judge: the rubric it grades by, and the score at or above which the answer passes (default 0.5). */
  judge: z.strictObject({ rubric: z.string().min(1), threshold: z.number().min(0).max(1).default(0.5) }).optional(),
});
export type AnswerExpectation = z.infer<typeof AnswerExpectation>;

export interface CheckResult {
  check: string;
  passed: boolean;
  score: number;
  /** Why it failed (absent when it passed). */
  reason?: string;
  /** Tokens the check itself spent (the judge). */
  tokens?: number;
}

const ajv = new Ajv2020({ allErrors: true, strict: false });

/** What is wrong with an expectation before anything runs: patterns and schemas that do not compile. */
export function expectationProblems(expect: AnswerExpectation): string[] {
  const problems: string[] = [];
  for (const pattern of expect.regex ?? []) {
    try {
      regexOf(pattern);
    } catch (error) {
      problems.push(`regex: ${(error as Error).message}`);
    }
  }
  if (expect.jsonSchema) {
    try {
      ajv.compile(expect.jsonSchema);
    } catch (error) {
      problems.push(`jsonSchema: ${(error as Error).message}`);
    }
  }
  return problems;
}

export async function checkAnswer(
  expect: AnswerExpectation,
  question: { input: string; answer: string },
  judge: Judge | undefined,
): Promise<CheckResult[]> {
  const { answer } = question;
  const results: CheckResult[] = [];
  for (const phrase of expect.contains ?? []) {
    results.push(
      verdict(`contains ${JSON.stringify(phrase)}`, answer.includes(phrase), `the answer does not contain ${JSON.stringify(phrase)}`),
    );
  }
  for (const phrase of expect.notContains ?? []) {
    results.push(
      verdict(`does not contain ${JSON.stringify(phrase)}`, !answer.includes(phrase), `the answer contains ${JSON.stringify(phrase)}`),
    );
  }
  for (const pattern of expect.regex ?? []) {
    const regex = regexOf(pattern);
    results.push(verdict(`matches ${regex}`, regex.test(answer), `the answer does not match ${regex}`));
  }
  if (expect.jsonSchema) results.push(checkJsonSchema(expect.jsonSchema, answer));
  if (expect.judge) results.push(await checkWithJudge(expect.judge, question, judge));
  return results;
}

function checkJsonSchema(schema: Record<string, unknown>, answer: string): CheckResult {
  const check = "JSON schema";
  const parsed = jsonOf(answer);
  if (parsed === undefined) return verdict(check, false, "the answer is not JSON (nor does it hold a ```json block)");
  const validate = ajv.compile(schema);
  if (validate(parsed.value)) return verdict(check, true, "");
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
  return verdict(check, false, `the answer's JSON does not fit the schema: ${errors}`);
}

async function checkWithJudge(
  { rubric, threshold }: { rubric: string; threshold: number },
  { input, answer }: { input: string; answer: string },
  judge: Judge | undefined,
): Promise<CheckResult> {
  const check = "judge";
  if (!judge) return { check, passed: false, score: 0, reason: "no judge model is configured (--judge-url, --judge-model)" };
  try {
    const { score, reason, tokens } = await judge({ input, answer, rubric });
    const passed = score >= threshold;
    return { check, passed, score, tokens, ...(passed ? {} : { reason: `the judge scored ${score} (below ${threshold}): ${reason}` }) };
  } catch (error) {
    return { check, passed: false, score: 0, reason: `the judge failed: ${(error as Error).message}` };
  }
}

function verdict(check: string, passed: boolean, reason: string): CheckResult {
  return passed ? { check, passed, score: 1 } : { check, passed, score: 0, reason };
}

function regexOf(pattern: z.infer<typeof Pattern>): RegExp {
  return typeof pattern === "string" ? new RegExp(pattern) : new RegExp(pattern.pattern, pattern.flags);
}

/** The answer as JSON: all of it, else its first fenced json block. */
function jsonOf(answer: string): { value: unknown } | undefined {
  for (const text of [answer, /```json\s*\n([\s\S]*?)```/.exec(answer)?.[1]]) {
    if (text === undefined) continue;
    try {
      return { value: JSON.parse(text) };
    } catch {
      // not this one
    }
  }
  return undefined;
}
