import { readFile } from "node:fs/promises";
import path from "node:path";
import { NotFoundError } from "../../shared/errors.js";
import type { Request } from "../api/routes.js";
import type { HttpResult } from "../http.js";

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};
/** Browsers ask for /favicon.ico whatever the page says: they get the SVG icon. */
const ALIASES: Record<string, string> = { "favicon.ico": "favicon.svg" };

/**
 * Same origin only (plus the stream's origin on AWS, and the files' store, where download links
 * point), no inline script, nothing from elsewhere: the console works offline.
 */
function securityHeaders(streamUrl: string | undefined, filesOrigin: string) {
  const stream = `${streamUrl ? ` ${new URL(streamUrl).origin}` : ""} ${filesOrigin}`;
  return {
    "content-security-policy": `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'${stream}; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

const cache = new Map<string, Promise<string>>();

/** The console's built files (infra/console, built by esbuild at install/build time), read once per container. */
export async function consoleAsset({ event, services }: Request): Promise<HttpResult> {
  const asked = event.rawPath.replace(/^\/+|\/+$/g, "") || "index.html";
  const name = ALIASES[asked] ?? asked;
  const dir = services.settings.consoleAssetsDir;
  if (!dir || !TYPES[name]) throw new NotFoundError("The console is not installed here; build it with `npm run build:console`.");
  const file = path.join(dir, name);
  let body = cache.get(file);
  if (!body) {
    body = readFile(file, "utf8");
    cache.set(file, body);
    body.catch(() => cache.delete(file));
  }
  const text = await body.catch(() => {
    throw new NotFoundError("The console is not built; run `npm run build:console`.");
  });
  return {
    statusCode: 200,
    headers: {
      "content-type": TYPES[name],
      "cache-control": "no-cache",
      ...securityHeaders(services.settings.links.stream, filesOrigin(services.settings)),
    },
    body: text,
  };
}

/** Where presigned download links point: the S3 endpoint the SDK is given, else the bucket's own. */
function filesOrigin({ files, region }: Request["services"]["settings"]): string {
  return files.s3Endpoint ? new URL(files.s3Endpoint).origin : `https://${files.bucket}.s3.${region}.amazonaws.com`;
}
