import { randomUUID } from "node:crypto";
import type { SealedSecret } from "../contracts/toolSources.js";
import type { SecretCipher } from "../ports/secretCipher.js";

/**
 * The secrets' cipher in memory: the sealed value holds only a handle, the plaintext stays in this
 * object, and opening under another context fails, as KMS refuses a wrong encryption context.
 */
export class MemorySecrets implements SecretCipher {
  private readonly kept = new Map<string, { plaintext: string; context: string }>();

  async seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret> {
    const handle = randomUUID();
    this.kept.set(handle, { plaintext, context: contextKey(context) });
    return { keyId: "memory", encryptedKey: handle, iv: "", tag: "", ciphertext: handle };
  }

  async open(sealed: SealedSecret, context: Record<string, string>): Promise<string> {
    const kept = this.kept.get(sealed.ciphertext);
    if (!kept || kept.context !== contextKey(context)) throw new Error("InvalidCiphertextException: the context does not match");
    return kept.plaintext;
  }
}

const contextKey = (context: Record<string, string>) => JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1)));
