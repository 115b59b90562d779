import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from "@aws-sdk/client-kms";
import type { SealedSecret } from "../contracts/toolSources.js";
import type { SecretCipher } from "../ports/secretCipher.js";

/**
 * Envelope encryption with KMS: each secret gets a fresh 256-bit data key from GenerateDataKey,
 * is encrypted with it locally (AES-256-GCM), and only the KMS-encrypted data key is kept beside
 * it. Opening asks KMS to decrypt the data key. The encryption context (tenant, purpose) is bound
 * both in KMS and as the GCM additional data, so a sealed value cannot be moved to another tenant.
 * On AWS the key is a KMS key of the stack; locally the same calls go to infra/local/kms.ts.
 */
export class EnvelopeCipher implements SecretCipher {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string | undefined,
  ) {}

  async seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret> {
    if (!this.keyId) throw new Error("TOOL_SOURCES_KMS_KEY_ID is not configured: secrets cannot be stored");
    const dataKey = await this.kms.send(new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: "AES_256", EncryptionContext: context }));
    if (!dataKey.Plaintext || !dataKey.CiphertextBlob) throw new Error("KMS GenerateDataKey returned no data key");
    const key = Buffer.from(dataKey.Plaintext);
    try {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(aad(context));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return {
        keyId: dataKey.KeyId ?? this.keyId,
        encryptedKey: Buffer.from(dataKey.CiphertextBlob).toString("base64"),
        iv: iv.toString("base64"),
        tag: cipher.getAuthTag().toString("base64"),
        ciphertext: ciphertext.toString("base64"),
      };
    } finally {
      key.fill(0);
    }
  }

  async open(sealed: SealedSecret, context: Record<string, string>): Promise<string> {
    const dataKey = await this.kms.send(
      new DecryptCommand({ CiphertextBlob: Buffer.from(sealed.encryptedKey, "base64"), KeyId: sealed.keyId, EncryptionContext: context }),
    );
    if (!dataKey.Plaintext) throw new Error("KMS Decrypt returned no plaintext key");
    const key = Buffer.from(dataKey.Plaintext);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64")).setAAD(aad(context));
      decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, "base64")), decipher.final()]).toString("utf8");
    } finally {
      key.fill(0);
    }
  }
}

/** The context in a fixed order, so sealing and opening agree byte for byte. */
function aad(context: Record<string, string>): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))), "utf8");
}
