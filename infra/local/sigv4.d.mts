import type { IncomingMessage } from "node:http";

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Why the request is refused, or undefined when it is signed (SigV4) with these credentials. */
export function sigV4Refusal(
  req: IncomingMessage,
  body: Uint8Array | string | undefined,
  credentials: LocalCredentials,
): Promise<string | undefined>;

/** Answers 403 (UnrecognizedClientException) to a request not signed with these credentials; true when refused. */
export function refuseUnsigned(
  req: IncomingMessage,
  body: Uint8Array | string | undefined,
  credentials: LocalCredentials,
  res: import("node:http").ServerResponse,
  contentType?: string,
): Promise<boolean>;
