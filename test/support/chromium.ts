import { accessSync, constants, readdirSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { aptInstall } from "./apt.js";

/**
 * The browser tests' Chromium, found before any test starts (this is the browser project's
 * globalSetup): a run on a machine without one either installs Debian's package, where it can, or
 * stops at once with one line saying what to install, never minutes later with a launch error.
 */

declare module "vitest" {
  export interface ProvidedContext {
    chromiumPath: string;
  }
}

/** Set it to use a particular Chromium or Chrome binary. */
export const CHROMIUM_ENV = "CHROMIUM_PATH";
export const DEBIAN_CHROMIUM = "/usr/bin/chromium";
export const MISSING_CHROMIUM =
  `No Chromium for the browser tests: install Debian's (sudo apt-get install -y chromium), ` +
  `or set ${CHROMIUM_ENV} to a Chromium or Chrome binary.`;

const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Playwright's downloaded browsers (`npx playwright install chromium`), newest build first. */
function playwrightChromiums(env: NodeJS.ProcessEnv): string[] {
  const cache = env.PLAYWRIGHT_BROWSERS_PATH || path.join(homedir(), ".cache", "ms-playwright");
  let builds: string[];
  try {
    builds = readdirSync(cache).filter((name) => /^chromium(_headless_shell)?-\d+$/.test(name));
  } catch {
    return [];
  }
  builds.sort((a, b) => Number(b.split("-").at(-1)) - Number(a.split("-").at(-1)));
  return builds.flatMap((build) =>
    [
      "chrome-linux64/chrome",
      "chrome-linux/chrome",
      "chrome-headless-shell-linux64/chrome-headless-shell",
      "chrome-linux/headless_shell",
    ].map((file) => path.join(cache, build, file)),
  );
}

/**
 * The first Chromium found: the environment variable (which must then name a binary), Debian's,
 * Playwright's cache. Undefined when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env, isExecutable = executable): string | undefined {
  const chosen = env[CHROMIUM_ENV];
  if (chosen) {
    if (!isExecutable(chosen)) throw new Error(`${CHROMIUM_ENV}=${chosen} is not an executable file. ${MISSING_CHROMIUM}`);
    return chosen;
  }
  return [DEBIAN_CHROMIUM, ...playwrightChromiums(env)].find(isExecutable);
}

function installDebianChromium(): boolean {
  return aptInstall(["chromium"], "for the browser tests: no Chromium found") && executable(DEBIAN_CHROMIUM);
}

/** Stops the run with one line: a thrown error would print a stack trace under it. */
function stop(line: string): never {
  console.error(`\n${line}\n`);
  process.exit(1);
}

export default function setup(project: TestProject) {
  let found: string | undefined;
  try {
    found = findChromium() ?? (installDebianChromium() ? DEBIAN_CHROMIUM : undefined);
  } catch (error) {
    stop((error as Error).message);
  }
  if (!found) stop(MISSING_CHROMIUM);
  project.provide("chromiumPath", found);
}
