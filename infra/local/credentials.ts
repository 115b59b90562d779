import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { LocalCredentials } from "./sigv4.mjs";

/**
 * The local stack's AWS credentials: every emulated endpoint (table, Step Functions, S3, SQS, KMS,
 * Lambda) serves only requests signed with them, as AWS does. The secret is random; with a data
 * folder it is kept there (readable by its owner only), so presigned links outlive a restart.
 */
export function localCredentials(file?: string): LocalCredentials {
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as LocalCredentials;
  const credentials = { accessKeyId: "stepwise-local", secretAccessKey: randomBytes(30).toString("base64url") };
  if (file) writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}
