import type { PiiEntity } from "../contracts/guardrails.js";

/**
 * The in-process detectors: personal data, prompt injection, an operator's regular expression. Each
 * returns the spans it found, so a check can block on them or redact exactly them. Pure and fast:
 * they run on every window of streamed text.
 */

export interface Span {
  start: number;
  end: number;
  /** What was found ("email", "card", "regex"...): a redaction says it. */
  label: string;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}/g;
/** 13 to 19 digits, single spaces or dashes between them. */
const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
/** A leading + or (, then digits with spaces, dots, dashes and parentheses: 8 to 15 digits in all (E.164 allows 15). */
const PHONE = /(?<![\w+])(?:\+|\()?\d[\d ().-]{6,}\d(?![\w])/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\d|\.\d)/g;

/** The Luhn checksum card numbers carry (ISO/IEC 7812): most digit runs that are not cards fail it. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616: the account moved behind its country and check digits, letters as numbers, mod 97 is 1. */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, "");
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const value = /[A-Z]/.test(ch) ? ch.charCodeAt(0) - 55 : Number(ch);
    rest = Number(`${rest}${value}`) % 97;
  }
  return rest === 1;
}

const digitsOf = (text: string) => text.replace(/\D/g, "");

function matches(text: string, pattern: RegExp, label: string, keep: (found: string) => boolean = () => true): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(pattern)) if (keep(m[0])) spans.push({ start: m.index, end: m.index + m[0].length, label });
  return spans;
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;

/** Personal data of the kinds asked for (default: all), without overlaps (the first kind found wins). */
export function findPii(text: string, entities?: readonly PiiEntity[]): Span[] {
  const wanted = new Set<PiiEntity>(entities ?? ["email", "card", "iban", "phone", "ip"]);
  const found: Span[] = [];
  const add = (spans: Span[]) => {
    for (const span of spans) if (!found.some((f) => overlaps(f, span))) found.push(span);
  };
  if (wanted.has("email")) add(matches(text, EMAIL, "email"));
  if (wanted.has("card")) add(matches(text, CARD, "card", (m) => luhnValid(digitsOf(m))));
  if (wanted.has("iban")) add(matches(text, IBAN, "iban", ibanValid));
  if (wanted.has("ip")) add(matches(text, IPV4, "ip"));
  if (wanted.has("phone")) {
    add(
      matches(text, PHONE, "phone", (m) => {
        const digits = digitsOf(m).length;
        // A date (2026-11-28) or a decimal is no phone number: it needs a phone's length.
        return digits >= 8 && digits <= 15 && !/^\d{4}-\d{2}-\d{2}$/.test(m);
      }),
    );
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * Phrasing that tries to take over a model: override its instructions, reveal its prompt, switch
 * it into an unrestricted persona. Written as patterns, not words, so ordinary text about
 * instructions does not fire.
 */
const INJECTION: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+)*(?:previous|prior|above|earlier|preceding|system|original)\s+(?:instructions?|prompts?|rules|directions|messages?|context)/i,
  /\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+(?:instructions?|prompt)|initial\s+(?:instructions?|prompt))/i,
  /\byou\s+are\s+now\s+(?:DAN|in\s+developer\s+mode|an?\s+unrestricted|jailbroken|free\s+of\s+(?:all\s+)?(?:rules|restrictions))/i,
  /\b(?:enable|enter|activate)\s+(?:developer|god|jailbreak|DAN)\s+mode\b/i,
  /\bdo\s+anything\s+now\b/i,
  /\bpretend\s+(?:that\s+)?you\s+(?:have|are\s+under)\s+no\s+(?:rules|restrictions|guidelines|filters)/i,
  /<\/?\s*(?:system|im_start|im_end)\s*>|\[\/?INST\]/i,
  /\bnew\s+instructions?\s*:\s*(?:you|from\s+now)/i,
];

export function findInjection(text: string): Span[] {
  const spans: Span[] = [];
  for (const pattern of INJECTION) {
    const m = pattern.exec(text);
    if (m) spans.push({ start: m.index, end: m.index + m[0].length, label: "prompt injection" });
  }
  return spans.sort((a, b) => a.start - b.start);
}

export function findPattern(text: string, pattern: string, flags = ""): Span[] {
  return matches(text, new RegExp(pattern, `${flags.replace("g", "")}g`), "pattern").filter((s) => s.end > s.start);
}

/** The text with each span replaced by a marker naming what it was. */
export function redact(text: string, spans: readonly Span[]): string {
  let out = "";
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (span.start < at) continue;
    out += `${text.slice(at, span.start)}[redacted ${span.label}]`;
    at = span.end;
  }
  return out + text.slice(at);
}
