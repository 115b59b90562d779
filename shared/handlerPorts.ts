import type { Ports } from "./ports/index.js";
import type { SecretCipher } from "./ports/secretCipher.js";

/**
 * Every port a handler can be wired with: the core's (Ports), the table for the health probe and
 * the secrets' cipher. No handler gets them all: each names the ones it uses (functions/uses.ts) and
 * its wiring builds those, each on first use (functions/wiring.ts); tests pass the in-memory fakes.
 */
export interface HandlerPorts extends Ports {
  /** The table, as far as the health check sees it: one read that proves it answers. */
  table: { probe(): Promise<void> };
  /** Seals and opens secrets at rest (tool source headers, A2A push tokens) with the stack's KMS key (shared/secrets/envelope.ts). */
  secrets: SecretCipher;
}

/** The name of a port a handler can be wired with. */
export type PortName = Exclude<keyof HandlerPorts, "settings">;

/** The ports named, and the settings. */
export type PortsOf<K extends PortName> = Pick<HandlerPorts, K | "settings">;

/**
 * What the doors (REST, MCP, A2A, AG-UI, the stream) work with: every port but the model (only the
 * steps call it), the raw table, the judges' spend (only the notifier's online evals count it) and
 * the trace export (the notifier sends a run's spans when it ends).
 * The secrets' cipher seals and opens A2A push configs' tokens at any door A2A reaches.
 */
export type DoorPorts = Omit<HandlerPorts, "model" | "table" | "evalSpend" | "traces">;
