// Finds arithmetic expressions in free text, e.g. "17*23", "(120/8)+2^5",
// "sqrt(144)", "3.5 * (2 + 4)". Used to decide calculator calls and plan tasks.

const FUNCTION_NAMES = ["sqrt", "abs", "round", "floor", "ceil", "log", "sin", "cos"];
const FUNCTION_OPENING = String.raw`(?:${FUNCTION_NAMES.join("|")})\s*\(`;

/** A maximal stretch of characters that could belong to an expression. */
const CANDIDATE_RUN = new RegExp(String.raw`(?:\b${FUNCTION_OPENING}|\bpi\b|\d|[-+*/^%(). \t])+`, "gi");

const TOKEN = new RegExp(String.raw`\s*(?:(\d+(?:\.\d+)?|\.\d+|pi\b)|(${FUNCTION_OPENING})|([-+*/^%()]))`, "iy");
const BINARY_OPERATORS = new Set(["+", "-", "*", "/", "^", "%"]);

type Token = "number" | "call" | string;

export function findExpressions(text: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const [run] of text.matchAll(CANDIDATE_RUN)) {
    const expression = tidy(run);
    const key = expression.replace(/\s+/g, "");
    if (!isExpression(expression) || seen.has(key)) continue;
    seen.add(key);
    found.push(expression);
  }
  return found;
}

/** Strips what surrounding prose leaves at the edges: spaces, full stops, dangling operators, stray parentheses. */
function tidy(run: string): string {
  let text = run;
  let previous: string;
  do {
    previous = text;
    text = text
      .trim()
      .replace(/[\s+\-*/^%.]+$/, "")
      // Keep a leading minus only when it is glued to its operand (a negative number, not a bullet).
      .replace(/^(?:[\s+*/^%.)]|-(?=\s))+/, "");
    text = dropUnbalancedEdgeParenthesis(text);
  } while (text !== previous);
  return text;
}

function dropUnbalancedEdgeParenthesis(text: string): string {
  const balance = [...text].reduce((depth, char) => depth + (char === "(" ? 1 : char === ")" ? -1 : 0), 0);
  if (balance > 0 && text.startsWith("(")) return text.slice(1);
  if (balance < 0 && text.endsWith(")")) return text.slice(0, -1);
  return text;
}

/** True when the text parses as arithmetic and does more than state a number. */
function isExpression(text: string): boolean {
  const tokens = tokenize(text);
  if (!tokens?.some((token) => token === "call" || BINARY_OPERATORS.has(token))) return false;
  if (!tokens.some((token) => token === "call" || token === "number")) return false;
  return parses(tokens);
}

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const match = TOKEN.exec(text);
    if (!match) return text.slice(TOKEN.lastIndex).trim() === "" ? tokens : undefined;
    tokens.push(match[1] ? "number" : match[2] ? "call" : match[3]);
  }
  return tokens;
}

/** Recursive descent over: sum := operand (binary operand)*; operand := [+-]* (number | call sum ")" | "(" sum ")"). */
function parses(tokens: Token[]): boolean {
  let position = 0;
  const operand = (): boolean => {
    while (tokens[position] === "-" || tokens[position] === "+") position++;
    const token = tokens[position++];
    if (token === "number") return true;
    if (token === "(" || token === "call") return sum() && tokens[position++] === ")";
    return false;
  };
  const sum = (): boolean => {
    if (!operand()) return false;
    while (position < tokens.length && BINARY_OPERATORS.has(tokens[position])) {
      position++;
      if (!operand()) return false;
    }
    return true;
  };
  return sum() && position === tokens.length;
}
