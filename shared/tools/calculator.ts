import * as z from "zod";
import { defineTool } from "./tool.js";

/**
 * Evaluates arithmetic exactly as written, with no `eval`: a small recursive-descent parser over
 * numbers, + - * / % ^ (right-associative), parentheses, constants and common functions.
 */
export const calculator = defineTool({
  name: "calculator",
  persona: "Quantitative analyst",
  description:
    "Evaluate an arithmetic expression. Supports + - * / % ^, parentheses, pi, e and sqrt, abs, round, floor, ceil, exp, ln, log (base 10), sin, cos, tan, min, max.",
  access: "read",
  parameters: z.object({ expression: z.string().min(1).max(500).describe("for example (120/8)+2^5") }),
  async run({ expression }) {
    return `${expression} = ${formatNumber(evaluate(expression))}`;
  },
});

const FUNCTIONS: Record<string, (...args: number[]) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  exp: Math.exp,
  ln: Math.log,
  log: Math.log10,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  min: Math.min,
  max: Math.max,
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

export function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

export function evaluate(expression: string): number {
  // × and ÷ as escapes: a bundle stays pure ASCII, which Node loads faster (shared/memory/urls.ts says more).
  const tokens = expression.match(/\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+|[a-z_]+|[-+*/%^(),\u00d7\u00f7]|\S/gi) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const next = () => tokens[position++];
  const expect = (token: string) => {
    if (next() !== token) throw new SyntaxError(`expected '${token}' in ${expression}`);
  };

  const sum = (): number => {
    let value = product();
    while (peek() === "+" || peek() === "-") value = next() === "+" ? value + product() : value - product();
    return value;
  };
  const product = (): number => {
    let value = unary();
    for (let op = peek(); op === "*" || op === "/" || op === "%" || op === "×" || op === "÷"; op = peek()) {
      next();
      const right = unary();
      if ((op === "/" || op === "÷" || op === "%") && right === 0) throw new RangeError("division by zero");
      value = op === "%" ? value % right : op === "/" || op === "÷" ? value / right : value * right;
    }
    return value;
  };
  const unary = (): number => {
    const sign = peek();
    if (sign !== "-" && sign !== "+") return power();
    next();
    return sign === "-" ? -unary() : unary();
  };
  const power = (): number => {
    const base = atom();
    if (peek() === "^") {
      next();
      return base ** unary();
    }
    return base;
  };
  const atom = (): number => {
    const token = next();
    if (token === undefined) throw new SyntaxError(`unexpected end of ${expression}`);
    if (token === "(") {
      const value = sum();
      expect(")");
      return value;
    }
    if (/^[\d.]/.test(token)) return Number(token);
    const name = token.toLowerCase();
    if (Object.hasOwn(CONSTANTS, name)) return CONSTANTS[name];
    const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
    if (!fn) throw new SyntaxError(`unknown symbol '${token}' in ${expression}`);
    expect("(");
    const args = [sum()];
    while (peek() === ",") {
      next();
      args.push(sum());
    }
    expect(")");
    return fn(...args);
  };

  const value = sum();
  if (position < tokens.length) throw new SyntaxError(`unexpected '${tokens[position]}' in ${expression}`);
  if (!Number.isFinite(value)) throw new RangeError(`${expression} has no finite value`);
  return value;
}
