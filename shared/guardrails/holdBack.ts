import type { GuardrailCheck } from "../contracts/guardrails.js";
import { checkInProcess, type Decision, isInProcess } from "./checks.js";

/** How long streamed text waits before its window is checked and released (the default). */
export const HOLD_BACK_MS = 100;

/**
 * What the end of the text may still become: a word not finished (an e-mail address grows until a
 * space), and a run of digits with spaces, dots, dashes and parentheses (a phone or card number).
 */
const OPEN_TAIL = /(?:[+(]?[\d ().-]*\d[\d ().-]*|\S+)$/;

/**
 * Streamed text on its way to clients, held back for a short window so the output checks see
 * whole spans: every `windowMs` the held text is checked (in-process checks: PII, regular expressions,
 * prompt injection) and released, redacted, up to where a span could still be growing; a span
 * split across chunks is therefore redacted whole, never sent in part. A block stops the stream:
 * nothing more is released. Checks run per window, not per chunk.
 *
 * A service-backed output check that blocks (moderation, an LLM judge) cannot run per window: with
 * one, nothing streams, and the answer comes whole once checked (`holdsAll`).
 */
export class HoldBack {
  private held = "";
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly inProcess: GuardrailCheck[];
  readonly holdsAll: boolean;

  constructor(
    checks: readonly GuardrailCheck[],
    private readonly release: (text: string) => void,
    private readonly decided: (decisions: Decision[]) => void,
    private readonly windowMs = HOLD_BACK_MS,
  ) {
    this.inProcess = checks.filter(isInProcess);
    this.holdsAll = checks.some((c) => !isInProcess(c) && c.action === "block");
  }

  /** A block stopped the stream. */
  get blocked(): boolean {
    return this.stopped;
  }

  push = (text: string): void => {
    if (this.stopped || this.holdsAll) return;
    this.held += text;
    this.timer ??= setTimeout(() => this.flush(false), this.windowMs);
  };

  /** The text broke off (a retry): what was held is dropped, never sent. */
  discard(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = "";
  }

  /** The end of the text: what is held is checked and released whole. */
  close(): void {
    this.flush(true);
  }

  private flush(final: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || !this.held) return;
    const text = this.held;
    const checked = checkInProcess(this.inProcess, "output", text);
    const fired = checked.decisions.filter((d) => d.verdict !== "pass");
    if (checked.blocked) {
      this.stopped = true;
      this.held = "";
      this.decided(fired);
      return;
    }
    let cut = final ? text.length : text.length - (text.match(OPEN_TAIL)?.[0].length ?? 0);
    // Never through a span: it is released whole, redacted, once the text after it is known.
    for (const span of fired.flatMap((d) => d.spans ?? [])) if (span.start < cut && cut < span.end) cut = span.start;
    if (cut <= 0) {
      if (!final) this.timer = setTimeout(() => this.flush(false), this.windowMs);
      return;
    }
    const released = fired.filter((d) => d.spans?.some((s) => s.end <= cut));
    const part = checkInProcess(this.inProcess, "output", text.slice(0, cut)).text;
    this.held = text.slice(cut);
    if (released.length) this.decided(released.map((d) => ({ ...d, spans: d.spans?.filter((s) => s.end <= cut) })));
    this.release(part);
    if (this.held && !final) this.timer = setTimeout(() => this.flush(false), this.windowMs);
  }
}
