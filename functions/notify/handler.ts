import middy from "@middy/core";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { ExecutionStatusEvent, NotifyMessage } from "../../shared/contracts/notify.js";
import { errorMessage } from "../../shared/errors.js";
import { logger } from "../../shared/observability.js";
import { onExecutionStatus, onQueueMessage } from "../../shared/run/endAndNotify.js";
import { modelPort } from "../modelPort.js";
import { observability } from "../observability.js";
import { secretsPort } from "../toolPorts.js";
import { HANDLER_USES } from "../uses.js";
import { wire } from "../wiring.js";

/** The notifier's ports (functions/uses.ts), each built on first use. */
const ports = wire(HANDLER_USES.Notify, { model: modelPort, secrets: secretsPort });

/**
 * The notification queue's consumer: Step Functions status changes (via EventBridge) and our own
 * messages (waiting for a person, webhook retries). A message that fails is retried by SQS and,
 * after its receive limit, lands in the dead-letter queue: nothing is lost.
 */
export const handler = middy(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: SQSBatchResponse["batchItemFailures"] = [];
  for (const record of event.Records) {
    try {
      const body: unknown = JSON.parse(record.body);
      const status = ExecutionStatusEvent.safeParse(body);
      if (status.success) await onExecutionStatus(ports, status.data);
      else await onQueueMessage(ports, NotifyMessage.parse(body));
    } catch (error) {
      logger.error("notification failed", { messageId: record.messageId, error: errorMessage(error) });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}).use(observability(() => ({})));
