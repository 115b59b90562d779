import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const FILE = "local-api-key";

/**
 * The local stack's API key: STEPWISE_API_KEY when given; otherwise one key per data folder, made
 * at the first start and kept there (so it stays the same across restarts); in memory, a new one.
 */
export function localApiKey(given: string | undefined, dataDir: string | undefined): { key: string; source: "given" | "kept" | "new" } {
  if (given) return { key: given, source: "given" };
  if (!dataDir) return { key: mint(), source: "new" };
  const file = path.join(dataDir, FILE);
  try {
    const kept = readFileSync(file, "utf8").trim();
    if (/^sk_local_[0-9a-f]{32}$/.test(kept)) return { key: kept, source: "kept" };
  } catch {
    // first start on this folder
  }
  const key = mint();
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, source: "new" };
}

const mint = () => `sk_local_${randomBytes(16).toString("hex")}`;
