import { z } from "zod";

/** Messages on the notification queue besides Step Functions' own status-change events. */
export const NotifyMessage = z.discriminatedUnion("kind", [
  /** Try delivering a webhook (again); not before `notBefore` (SQS delays at most 15 minutes). */
  z.object({
    kind: z.literal("deliver"),
    runId: z.string(),
    deliveryId: z.string(),
    attempt: z.number().int().min(1),
    notBefore: z.string().optional(),
  }),
  /** A run started waiting for a person. */
  z.object({ kind: z.literal("awaiting_input"), runId: z.string(), interruptId: z.string() }),
  /** A run ended without its execution reporting it (the execution was gone): send its terminal webhook. */
  z.object({ kind: z.literal("ended"), runId: z.string() }),
]);
export type NotifyMessage = z.infer<typeof NotifyMessage>;
