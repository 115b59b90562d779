import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { inject } from "vitest";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A real headless Chromium with a fresh profile, removed again by close(). */
export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(path.join(tmpdir(), "stepwise-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      // Found (or installed) before the tests start: test/support/chromium.ts.
      executablePath: inject("chromiumPath"),
      headless: true,
      args: FLAGS,
      viewport,
      acceptDownloads: true,
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
