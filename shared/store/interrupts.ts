import { Interrupt, type Resolution } from "../contracts/interrupts.js";
import { readVersioned } from "../contracts/schemaVersion.js";
import { type Interrupts, missingInterrupt } from "../ports/interrupts.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, itemData, type Table, updatedItem } from "./table.js";

/** Interrupts and their task tokens. Reads for clients strip the token. */
export class InterruptStore implements Interrupts {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /** Creates the interrupt unless it exists (ids are deterministic: a retried step finds its own). */
  async open(interrupt: Interrupt): Promise<{ created: boolean; interrupt: Interrupt }> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: {
          ...keys.interrupt(interrupt.runId, interrupt.interruptId),
          ...Interrupt.parse(interrupt),
          ttl: expiresAt(this.retentionDays),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    if (written) return { created: true, interrupt };
    const existing = await this.get(interrupt.runId, interrupt.interruptId);
    if (!existing) throw new Error(`Interrupt ${interrupt.interruptId} was there when written, yet cannot be read.`);
    return { created: false, interrupt: existing };
  }

  async get(runId: string, interruptId: string): Promise<Interrupt | undefined> {
    return (await this.getWithToken(runId, interruptId))?.interrupt;
  }

  async getWithToken(runId: string, interruptId: string): Promise<{ interrupt: Interrupt; taskToken?: string } | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.interrupt(runId, interruptId), ConsistentRead: true });
    if (!Item) return undefined;
    return { interrupt: interruptOf(Item), taskToken: Item.taskToken as string | undefined };
  }

  async list(runId: string): Promise<Interrupt[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(keys.runPk(runId), keys.interruptPrefix);
    return items.map(interruptOf);
  }

  /** Stores the token of the waiting callback task; returns the interrupt as it stands. */
  async attachToken(runId: string, interruptId: string, taskToken: string): Promise<Interrupt> {
    const updated = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.interrupt(runId, interruptId),
        UpdateExpression: "SET taskToken = :token",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":token": taskToken },
        ReturnValues: "ALL_NEW",
      }),
    );
    if (!updated) throw missingInterrupt(runId, interruptId);
    return interruptOf(updatedItem(updated));
  }

  /** pending → resolved, once. False if it was not pending any more. */
  async resolve(runId: string, interruptId: string, resolution: Resolution): Promise<boolean> {
    return this.transition(runId, interruptId, "resolved", { resolution });
  }

  async transition(runId: string, interruptId: string, status: Interrupt["status"], extra: Record<string, unknown> = {}): Promise<boolean> {
    const applied = await this.table.setIf(
      keys.interrupt(runId, interruptId),
      { status, ...extra },
      {
        expression: "#status = :pending",
        names: { "#status": "status" },
        values: { ":pending": "pending" },
      },
    );
    return applied !== undefined;
  }
}

/** An interrupt from its item: the task token stays in the table. */
export function interruptOf(item: Record<string, unknown>): Interrupt {
  return readVersioned(Interrupt, `interrupt ${String(item.interruptId)}`, itemData(item, "taskToken"));
}
