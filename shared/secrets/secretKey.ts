import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { ApiKeySource } from "../ports/apiKeySource.js";

/** A key given as it is (locally, from the environment): nothing to read again. */
export const fixedKey = (value: string): ApiKeySource => ({ read: async () => value, forget: () => {} });

/** How long a key read from Secrets Manager is used before it is read again. */
export const SECRET_KEY_TTL_MS = 5 * 60_000;

/**
 * An API key in Secrets Manager (the model's, a search API's): read when a call needs it, again
 * once SECRET_KEY_TTL_MS have passed, and at once after the service refused it (401). A rotated or
 * corrected key is seen within minutes by warm containers too, so "fix the key, then resume"
 * works without a deploy.
 */
export class SecretKey implements ApiKeySource {
  private value?: Promise<string>;
  private readAt = 0;

  constructor(
    private readonly secrets: Pick<SecretsManagerClient, "send">,
    private readonly secretId: string,
    private readonly now: () => number = Date.now,
  ) {}

  // A method, not an arrow field: building a SecretKey reads nothing (the IAM-coverage test reads
  // field initializers as run at construction, and functions that never search get no grant).
  read(): Promise<string> {
    if (!this.value || this.now() - this.readAt >= SECRET_KEY_TTL_MS) {
      this.readAt = this.now();
      const value = this.secrets.send(new GetSecretValueCommand({ SecretId: this.secretId })).then((secret) => secret.SecretString ?? "");
      value.catch(() => {
        if (this.value === value) this.value = undefined; // try again on the next call
      });
      this.value = value;
    }
    return this.value;
  }

  forget(): void {
    this.value = undefined;
  }
}
