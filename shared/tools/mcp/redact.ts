/** The mask shown wherever a secret would be. */
const MASK = "***";

/**
 * Masks every occurrence of the secrets in a text (an error message, a tool's output): a server
 * may echo the header it was sent, and nothing from it may show a secret to the model, an event,
 * a log line or a webhook.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  // "Bearer <token>": the token alone is a secret too.
  const parts = secrets.flatMap((secret) => [secret, ...secret.split(/\s+/).filter((part) => part.length >= 8)]);
  const values = [...new Set(parts.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (text) => text;
  return (text) => values.reduce((masked, secret) => masked.split(secret).join(MASK), text);
}
