// AWS Signature Version 4 checked on the local stack's endpoints, as AWS checks it: a request is
// served only when it is signed with the stack's credentials. A tenant's code that reaches a socket
// finds these endpoints on loopback, but not the secret (the sandbox's environment is empty), so it
// can read and change nothing. Plain JavaScript: dynalite's thread loads it without a TypeScript loader.

import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";

/** node:crypto's SHA-256 in the shape the signer takes (a hash, or an HMAC when given a secret). */
class Sha256 {
  constructor(secret) {
    this.hash = secret ? createHmac("sha256", secret) : createHash("sha256");
  }
  update(data) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,]+)\/(\d{8})\/([^/,]+)\/([^/,]+)\/aws4_request, ?SignedHeaders=([a-z0-9;_.-]+), ?Signature=([0-9a-f]{64})$/;
const signers = new Map();

/**
 * Why the request is refused, or undefined when its Authorization header is a valid signature with
 * these credentials. `body` is needed unless the request carries its payload's hash
 * (x-amz-content-sha256), as the AWS SDK for JavaScript and S3 clients send it.
 */
export async function sigV4Refusal(req, body, credentials) {
  const match = AUTHORIZATION.exec(String(req.headers.authorization ?? ""));
  if (!match) return "The request is not signed (Signature Version 4 with the stack's credentials is required).";
  const [, accessKeyId, , region, service, signedHeaders, signature] = match;
  if (accessKeyId !== credentials.accessKeyId) return "The access key is not known here.";
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (Number.isNaN(signingDate.getTime())) return "X-Amz-Date is missing or malformed.";
  const headers = {};
  for (const name of signedHeaders.split(";")) headers[name] = String(req.headers[name] ?? "");
  const url = new URL(req.url ?? "/", "http://localhost");
  const query = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? [].concat(query[name], value) : value;
  // By credentials too: emulators with credentials of their own may share this module (one test worker).
  const key = [credentials.accessKeyId, credentials.secretAccessKey, region, service].join("\n");
  let signer = signers.get(key);
  if (!signer) {
    // S3 signs the path as sent; the other services encode it once more.
    signer = new SignatureV4({ credentials, region, service, sha256: Sha256, uriEscapePath: service !== "s3" });
    signers.set(key, signer);
  }
  const signed = await signer.sign(
    { method: req.method ?? "GET", protocol: "http:", hostname: "localhost", path: url.pathname, query, headers, body: body ?? "" },
    { signingDate, signableHeaders: new Set(Object.keys(headers)) },
  );
  const expected = Buffer.from(/Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1] ?? "");
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return "The request signature we calculated does not match the signature you provided.";
  }
  return undefined;
}

/**
 * Answers a request not signed with these credentials as the AWS JSON protocols do (403,
 * UnrecognizedClientException) and says so; true when it was refused.
 */
export async function refuseUnsigned(req, body, credentials, res, contentType = "application/x-amz-json-1.0") {
  const refusal = await sigV4Refusal(req, body, credentials);
  if (!refusal) return false;
  res.writeHead(403, { "content-type": contentType, "x-amzn-errortype": "UnrecognizedClientException" });
  res.end(JSON.stringify({ __type: "UnrecognizedClientException", message: refusal }));
  return true;
}
