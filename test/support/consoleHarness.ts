import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import { launchBrowser } from "./browser.js";
import { startDropProxy } from "./dropProxy.js";
import { type RunningStack, startStack } from "./localStack.js";
import { type Fault, type ModelProxy, type ProxiedRequest, startModelProxy } from "./modelProxy.js";
import { startTogether } from "./startTogether.js";

/**
 * What each browser test file of the console shares: a local stack behind a proxy that can drop
 * every connection, an offline model behind a proxy that can hold or break chosen calls, one
 * Chromium, and the steps a person takes on the console. Each file starts its own (files run side by side).
 */

/** Screenshots land here (test output, not committed); docs/local-stack.md links the committed copies in test/screenshots/. */
export const SCREENSHOTS = path.resolve("test/output/screenshots");

/** Room for a busy machine: each poll waits for the API or the stack, not for a timer. */
export const WIDE = { timeout: 15_000 };

/** The two widths the console is checked at: a laptop and a phone. */
export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Decides how a model call fails (undefined: this rule lets it through); it may wait first, to hold the call. */
export type ModelRule = (request: ProxiedRequest) => Fault | undefined | Promise<Fault | undefined>;

/** Where the console keeps the tab's key (infra/console/src/api.ts). */
const KEY_STORAGE = "stepwise.apiKey";

type Browser = Awaited<ReturnType<typeof launchBrowser>>;
type DropProxy = Awaited<ReturnType<typeof startDropProxy>>;

export interface ConsoleHarness {
  readonly stack: RunningStack;
  /** The console's address: the stack behind a proxy that can drop every connection at once. */
  readonly proxy: DropProxy;
  readonly browser: Browser;
  /**
   * Asked in turn about each model call: a rule may hold it (by waiting) or say how it fails; the
   * call goes through when none does. Each rule picks its own run's calls (asksAbout), so runs of
   * other cases, started together, go on unhindered.
   */
  readonly modelRules: Set<ModelRule>;
  /** The API with the stack's key: GET without a body, POST with one; the parsed answer. */
  api(pathname: string, body?: unknown): Promise<any>;
  /** Starts a run through the API; its id. */
  startRun(body: Record<string, unknown>): Promise<string>;
  /** Signs in through the Sign in form, as a person does. */
  signIn(page: Page): Promise<void>;
  /**
   * A new tab already signed in (the key in its session storage, where the Sign in form puts it),
   * open at `hash`: for the cases that check other things than signing in.
   */
  openPage(hash?: string): Promise<Page>;
  openNewRun(page: Page): Promise<void>;
  /** Submits a plan_solve run whose writes wait for a person; its run id once its page is open. */
  submit(page: Page, task: string): Promise<string>;
  /** The console's event log, as (seq, type) in the order it showed them. */
  shownEvents(page: Page): Promise<{ seq: number; type: string }[]>;
}

/**
 * Registers the file's beforeAll (the offline model, the stack with `env`, Chromium, the proxies)
 * and afterAll (all of them stopped, also when setup failed half-way), and returns the harness.
 */
export function useConsoleStack(env: Record<string, string> = {}): ConsoleHarness {
  let model: OfflineModel | undefined;
  let modelProxy: ModelProxy | undefined;
  let stack: RunningStack | undefined;
  let proxy: DropProxy | undefined;
  let browser: Browser | undefined;

  const stopAll = async () => {
    await Promise.all([browser?.close(), proxy?.close(), stack?.stop()]);
    await Promise.all([modelProxy?.close(), model?.close()]);
  };

  const harness: ConsoleHarness = {
    get stack() {
      return stack!;
    },
    get proxy() {
      return proxy!;
    },
    get browser() {
      return browser!;
    },
    modelRules: new Set(),

    async api(pathname, body) {
      const response = await fetch(`${stack!.url}${pathname}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${stack!.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return response.json();
    },

    async startRun(body) {
      const answer = await harness.api("/v1/runs", body);
      if (typeof answer.runId !== "string") throw new Error(`The run did not start: ${JSON.stringify(answer)}`);
      return answer.runId;
    },

    async signIn(page) {
      await page.goto(proxy!.url);
      await page.getByLabel("API key").fill(stack!.apiKey);
      await page.getByRole("button", { name: "Sign in" }).click();
      // The Runs page waits for its first read of the API.
      await expect.poll(() => page.getByRole("heading", { name: "Runs" }).isVisible(), WIDE).toBe(true);
    },

    async openPage(hash = "#/runs") {
      const page = await browser!.context.newPage();
      try {
        await page.addInitScript(([name, key]) => (globalThis as any).sessionStorage.setItem(name, key), [KEY_STORAGE, stack!.apiKey]);
        await page.goto(`${proxy!.url}/${hash}`);
      } catch (error) {
        await page.close();
        throw error;
      }
      return page;
    },

    /**
     * Until the hash change has rendered the form, the page still shows the run before, whose
     * "Tasks" region would match a loose "Task" label.
     */
    async openNewRun(page) {
      await page.getByRole("link", { name: "New run", exact: true }).first().click();
      await page.getByRole("heading", { name: "New run", exact: true }).waitFor(WIDE);
    },

    async submit(page, task) {
      await harness.openNewRun(page);
      await page.getByLabel("Task", { exact: true }).fill(task);
      await page.getByLabel("Mode").selectOption("plan_solve");
      await page.getByLabel("Approve tool calls").selectOption("write");
      await page.getByRole("button", { name: "Submit" }).click();
      await page.waitForURL(/#\/runs\/run_/, WIDE);
      return page.url().split("#/runs/")[1]!;
    },

    shownEvents: (page) =>
      page
        .locator("#event-log li")
        .evaluateAll((items) => items.map((li) => ({ seq: Number((li as any).dataset.seq), type: (li as any).dataset.type }))),
  };

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    try {
      model = await startOfflineModel({ latencyMs: 50 });
      modelProxy = await startModelProxy(model.url, async (_, request) => {
        for (const rule of harness.modelRules) {
          const fault = await rule(request);
          if (fault) return fault;
        }
        return undefined;
      });
      // The browser starts while the stack does; startTogether stops whichever started if the other did not.
      [browser, stack] = await startTogether(
        launchBrowser(),
        // Session titles on (the test stacks' default is off): the Sessions page shows them.
        startStack({ OPENAI_BASE_URL: modelProxy.url, STEPWISE_MODEL: "stepwise-offline", STEPWISE_SESSION_TITLES: "true", ...env }),
      );
      proxy = await startDropProxy(stack.url);
    } catch (error) {
      await stopAll();
      throw error;
    }
  });
  afterAll(stopAll);

  return harness;
}

/** The options of a select whose text does not fit the closed select (shown cut). */
export const cutOptions = (select: Locator) =>
  select.evaluate((element: any) => {
    const style = (globalThis as any).getComputedStyle(element);
    const context = (globalThis as any).document.createElement("canvas").getContext("2d");
    context.font = style.font;
    // The text's room: the box less its padding and the drop-down arrow (about 20 px in Chromium).
    const room = element.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - 20;
    return [...element.options].filter((option: any) => context.measureText(option.text).width > room).map((option: any) => option.text);
  });

/** How wide the page is drawn: more than the viewport means it scrolls sideways. */
export const pageWidth = (page: Page) => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);

/** Whether a model request belongs to the run whose task carries `marker`. */
export const asksAbout = (request: ProxiedRequest, marker: string) => JSON.stringify(request.body.messages).includes(marker);
