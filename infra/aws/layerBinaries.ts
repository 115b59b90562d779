import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The native binaries the Lambda layers ship for Linux arm64, which npm installs only for the build
 * machine's platform: fetched once, online, at install time (`npm run fetch:binaries`, run by
 * `npm ci`), into a folder of their own. Synth only reads them there: it never installs anything,
 * and fails naming the command when one is missing.
 */
export const LAYER_BINARIES_DIR = path.join(root, "node_modules/.stepwise/linux-arm64");

/** resvg (the charts' PNG renderer): its package and its Linux arm64 binary's. */
export const RESVG = "@resvg/resvg-js";
export const RESVG_ARM64 = "@resvg/resvg-js-linux-arm64-gnu";

/** The installed version of a package of the project (what the layer must match). */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * The folder holding resvg for Linux arm64 (its package and its binary's, at the installed version),
 * or an error saying how to get it: synth does not reach the network.
 */
export function resvgForLinuxArm64(dir = LAYER_BINARIES_DIR): string {
  const version = installedVersion(RESVG);
  const modules = path.join(dir, "node_modules");
  for (const name of [RESVG, RESVG_ARM64]) {
    const manifest = path.join(modules, name, "package.json");
    const found = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version : undefined;
    if (found !== version)
      throw new Error(
        `The work products' layer needs ${name}@${version} for Linux arm64 in ${path.relative(root, modules)} (${found ? `found ${found}` : "missing"}). Run \`npm run fetch:binaries\` once, online (npm ci runs it), then synth again.`,
      );
  }
  return path.join(modules, "@resvg");
}

/** Fetches the binaries (`npm run fetch:binaries`): the one step that reaches the registry. */
export function fetchLayerBinaries(dir = LAYER_BINARIES_DIR): void {
  mkdirSync(dir, { recursive: true });
  execFileSync(
    "npm",
    [
      "install",
      "--prefix",
      dir,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--os=linux",
      "--cpu=arm64",
      "--libc=glibc",
      `${RESVG}@${installedVersion(RESVG)}`,
    ],
    { stdio: "inherit" },
  );
  resvgForLinuxArm64(dir);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) fetchLayerBinaries();
