import type { Executions } from "../../shared/ports/executions.js";
import type { Ports } from "../../shared/ports/index.js";
import type { ToolCatalog } from "../../shared/ports/toolCatalog.js";
import type { Tool } from "../../shared/ports/tools.js";
import { EventedFileStore } from "../../shared/run/fileEvents.js";
import type { memoryPorts } from "../../shared/testing/memoryPorts.js";
import { ToolRegistry } from "../../shared/tools/registry.js";

/** The process running a step died (an injected fault). */
export class Crash extends Error {
  override name = "Crash";
}

/** One attempt of a state (one Lambda invocation): once it has crashed, nothing it still has in flight reaches a store. */
export interface Life {
  dead: boolean;
}

/**
 * Numbered fault points across one run: the `crashAt`-th point reached crashes the attempt that
 * reached it. Points are before and after each model call, tool call, event append and journal
 * write, and after each state's output.
 */
export class Faults {
  reached = 0;
  readonly labels: string[] = [];
  crashedAt?: string;

  constructor(private readonly crashAt = Number.POSITIVE_INFINITY) {}

  point(life: Life, label: string): void {
    if (life.dead) throw new Crash(`the process had died (${label})`);
    this.reached++;
    this.labels.push(label);
    if (this.reached === this.crashAt) {
      life.dead = true;
      this.crashedAt = label;
      throw new Crash(`crash at point ${this.reached}: ${label}`);
    }
  }
}

/** A port whose every call fails once its attempt has died, with fault points around `pointed` methods. */
function guarded<T extends object>(target: T, life: Life, faults: Faults, pointed: Record<string, string> = {}): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== "function") return value;
      const label = typeof property === "string" ? pointed[property] : undefined;
      // As the port would fail: an async method with a rejected promise, a plain one by throwing.
      const isAsync = (value as { constructor: { name: string } }).constructor.name === "AsyncFunction";
      return (...args: unknown[]) => {
        if (life.dead) {
          if (isAsync) return Promise.reject(new Crash("the process had died"));
          throw new Crash("the process had died");
        }
        if (!label) return (value as (...a: unknown[]) => unknown).apply(receiver, args);
        return (async () => {
          faults.point(life, `before ${label}`);
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(receiver, args);
          faults.point(life, `after ${label}`);
          return result;
        })();
      };
    },
  });
}

function crashingTools(catalog: ToolCatalog, life: Life, faults: Faults): ToolCatalog {
  return {
    async registryFor(...args) {
      if (life.dead) throw new Crash("the process had died"); // (inside an async function: a rejection)
      const registry = await catalog.registryFor(...args);
      const wrap = (tool: Tool): Tool => ({
        ...tool,
        async run(toolArgs, context) {
          faults.point(life, `before tool ${tool.name}`);
          const output = await tool.run(toolArgs, context);
          faults.point(life, `after tool ${tool.name}`);
          return output;
        },
      });
      return new ToolRegistry(registry.names.map((name) => wrap(registry.get(name)!)));
    },
  };
}

/** The in-memory ports as one attempt of a step sees them (with these executions, e.g. the real state machine's). */
export function attemptPorts(
  memory: ReturnType<typeof memoryPorts>,
  life: Life,
  faults: Faults,
  executions: Executions = memory.fakes.executions,
): Ports {
  const { ports, fakes } = memory;
  const events = guarded(fakes.events, life, faults, { append: "event append" });
  const runs = guarded(fakes.runs, life, faults);
  const guard = <T extends object>(port: T) => guarded(port, life, faults);
  return {
    ...ports,
    runs,
    events,
    journal: guarded(fakes.journal, life, faults, { commit: "journal write" }),
    tasks: guard(fakes.tasks),
    interrupts: guard(fakes.interrupts),
    files: new EventedFileStore(guard(fakes.files), events, runs),
    transfers: guard(fakes.files),
    executions: guard(executions),
    notifyQueue: guard(fakes.notifyQueue),
    activeRuns: guard(fakes.activeRuns),
    sessions: guard(fakes.sessions),
    webhooks: guard(fakes.webhooks),
    idempotency: guard(fakes.idempotency),
    model: guarded(ports.model, life, faults, { complete: "model call" }),
    tools: crashingTools(ports.tools, life, faults),
  };
}
