import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "./account.js";
import { type LocalCredentials, refuseUnsigned } from "./sigv4.mjs";

export const LOCAL_KMS_KEY_ID = `arn:aws:kms:${LOCAL_REGION}:${LOCAL_ACCOUNT}:key/stepwise-local`;
const MAGIC = Buffer.from("LKMS1");

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * KMS on loopback, for the same envelope-encryption code that runs on AWS: the JSON-protocol
 * actions it uses (GenerateDataKey, Decrypt, Encrypt) with one symmetric key. The key is kept in
 * `keyFile` when given (so data sealed before a restart still opens), else only in memory.
 * A ciphertext is bound to its encryption context, as in KMS.
 */
export class LocalKms {
  private server?: Server;
  private readonly masterKey: Buffer;

  constructor(
    private readonly credentials: LocalCredentials,
    keyFile?: string,
  ) {
    if (keyFile && existsSync(keyFile)) {
      this.masterKey = Buffer.from(readFileSync(keyFile, "utf8").trim(), "hex");
    } else {
      this.masterKey = randomBytes(32);
      if (keyFile) writeFileSync(keyFile, this.masterKey.toString("hex"), { mode: 0o600 });
    }
  }

  async listen(): Promise<string> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (await refuseUnsigned(req, Buffer.concat(chunks), this.credentials, res, "application/x-amz-json-1.1")) return;
      const action = String(req.headers["x-amz-target"] ?? "").replace(/^TrentService\./, "");
      try {
        const body = this.dispatch(action, JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
        res.writeHead(200, { "content-type": "application/x-amz-json-1.1" }).end(JSON.stringify(body));
      } catch (error) {
        const type = error instanceof KmsError ? error.type : "ValidationException";
        res
          .writeHead(400, { "content-type": "application/x-amz-json-1.1" })
          .end(JSON.stringify({ __type: type, message: (error as Error).message }));
      }
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  // biome-ignore lint/suspicious/noExplicitAny: the request's JSON body, whose fields depend on the action (each case reads the ones the AWS API defines for it)
  private dispatch(action: string, input: Record<string, any>): Record<string, unknown> {
    switch (action) {
      case "GenerateDataKey": {
        if (input.KeySpec !== "AES_256" && input.NumberOfBytes !== 32) throw new KmsError("ValidationException", "only AES_256 data keys");
        const plaintext = randomBytes(32);
        return {
          KeyId: LOCAL_KMS_KEY_ID,
          Plaintext: plaintext.toString("base64"),
          CiphertextBlob: this.encrypt(plaintext, input.EncryptionContext).toString("base64"),
        };
      }
      case "Encrypt":
        return {
          KeyId: LOCAL_KMS_KEY_ID,
          CiphertextBlob: this.encrypt(Buffer.from(String(input.Plaintext ?? ""), "base64"), input.EncryptionContext).toString("base64"),
        };
      case "Decrypt":
        return {
          KeyId: LOCAL_KMS_KEY_ID,
          Plaintext: this.decrypt(Buffer.from(String(input.CiphertextBlob ?? ""), "base64"), input.EncryptionContext).toString("base64"),
        };
      default:
        throw new KmsError("UnknownOperationException", `the local KMS does not implement ${action}`);
    }
  }

  private encrypt(plaintext: Buffer, context: Record<string, string> = {}): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.masterKey, iv).setAAD(contextBytes(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), ciphertext]);
  }

  private decrypt(blob: Buffer, context: Record<string, string> = {}): Buffer {
    if (blob.length < MAGIC.length + 28 || !blob.subarray(0, MAGIC.length).equals(MAGIC))
      throw new KmsError("InvalidCiphertextException", "not a ciphertext of this key");
    const iv = blob.subarray(MAGIC.length, MAGIC.length + 12);
    const tag = blob.subarray(MAGIC.length + 12, MAGIC.length + 28);
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.masterKey, iv).setAAD(contextBytes(context));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(blob.subarray(MAGIC.length + 28)), decipher.final()]);
    } catch {
      throw new KmsError("InvalidCiphertextException", "the ciphertext or its encryption context does not match");
    }
  }
}

function contextBytes(context: Record<string, string>): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));
}
