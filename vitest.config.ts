import { configDefaults, defineConfig } from "vitest/config";

/** The projects whose tests start local stacks compile the stack once per run first (test/support/compiledStack.ts). */
const COMPILED_STACK = "test/support/compiledStack.ts";

const OFFICE_TESTS = ["test/unit/shared/reports/slides.test.ts", "test/integration/workProducts.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 300_000,
    // A test whose local stack died says so, with the stack's exit and last log lines.
    setupFiles: ["test/support/stackDeaths.ts"],
    // Integration files each start their own local stack; two cores, so keep files few at a time.
    maxWorkers: 2,
    // The SDK warns on Node 20 (Lambda runs Node 22); the project supports both on purpose. Tracing
    // is off outside Lambda: the X-Ray SDK starts without the async hook it puts on every promise.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", AWS_XRAY_MANUAL_MODE: "true" },
    projects: [
      // The browser tests find (or install) a Chromium first; the setup runs only when they do.
      {
        extends: true,
        test: { name: "browser", include: ["test/browser/**/*.test.ts"], globalSetup: ["test/support/chromium.ts", COMPILED_STACK] },
      },
      // The tests that open decks in LibreOffice install it first, the same way.
      { extends: true, test: { name: "office", include: OFFICE_TESTS, globalSetup: ["test/support/libreoffice.ts", COMPILED_STACK] } },
      // Unit tests share their worker's modules (no isolation per file): they keep no global state, and
      // importing the core once per worker, not once per file, saves a third of their CPU time.
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], exclude: [...configDefaults.exclude, ...OFFICE_TESTS], isolate: false },
      },
      {
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          globalSetup: [COMPILED_STACK],
          exclude: [...configDefaults.exclude, "test/browser/**", "test/unit/**", ...OFFICE_TESTS],
        },
      },
    ],
  },
});
