import type { SealedSecret } from "../contracts/toolSources.js";

/**
 * Seals and opens secrets kept at rest (tool source headers, A2A push tokens). The context is bound to the sealed
 * value: opening it under another context fails. shared/secrets/envelope.ts seals with KMS.
 */
export interface SecretCipher {
  seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret>;
  open(sealed: SealedSecret, context: Record<string, string>): Promise<string>;
}
