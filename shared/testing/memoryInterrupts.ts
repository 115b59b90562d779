import { Interrupt, type Resolution } from "../contracts/interrupts.js";
import { type Interrupts, missingInterrupt } from "../ports/interrupts.js";
import { stored } from "./clone.js";

/** The interrupts port in memory: opened once, each status change pending → something once. */
export class MemoryInterrupts implements Interrupts {
  readonly items = new Map<string, { interrupt: Interrupt; taskToken?: string }>();

  async open(interrupt: Interrupt): Promise<{ created: boolean; interrupt: Interrupt }> {
    const key = `${interrupt.runId}|${interrupt.interruptId}`;
    const existing = this.items.get(key);
    if (existing) return { created: false, interrupt: stored(existing.interrupt) };
    this.items.set(key, { interrupt: stored(Interrupt.parse(interrupt)) });
    return { created: true, interrupt };
  }

  async get(runId: string, interruptId: string): Promise<Interrupt | undefined> {
    return stored(this.items.get(`${runId}|${interruptId}`)?.interrupt);
  }

  async getWithToken(runId: string, interruptId: string): Promise<{ interrupt: Interrupt; taskToken?: string } | undefined> {
    return stored(this.items.get(`${runId}|${interruptId}`));
  }

  async list(runId: string): Promise<Interrupt[]> {
    return stored([...this.items.values()].filter((i) => i.interrupt.runId === runId).map((i) => i.interrupt)).sort((a, b) =>
      a.interruptId.localeCompare(b.interruptId),
    );
  }

  async attachToken(runId: string, interruptId: string, taskToken: string): Promise<Interrupt> {
    const item = this.items.get(`${runId}|${interruptId}`);
    if (!item) throw missingInterrupt(runId, interruptId);
    item.taskToken = taskToken;
    return stored(item.interrupt);
  }

  async resolve(runId: string, interruptId: string, resolution: Resolution): Promise<boolean> {
    return this.transition(runId, interruptId, "resolved", { resolution });
  }

  async transition(runId: string, interruptId: string, status: Interrupt["status"], extra: Record<string, unknown> = {}): Promise<boolean> {
    const item = this.items.get(`${runId}|${interruptId}`);
    if (item?.interrupt.status !== "pending") return false;
    item.interrupt = { ...item.interrupt, status, ...stored(extra) } as Interrupt;
    return true;
  }
}
