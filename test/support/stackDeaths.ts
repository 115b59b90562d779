import { afterEach, beforeEach } from "vitest";
import { assertNoStackDied } from "./localStack.js";

// Every test file's setup (vitest.config.ts): once a file's local stack has died, its tests say so
// (with the stack's exit and last log lines) instead of failing on a refused connection.
beforeEach(assertNoStackDied);
afterEach(assertNoStackDied);
