import { Duration } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import * as cw from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { type ITable, Operation } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { RUN_FAULT_METRIC } from "../../shared/run/lifecycle.js";

export interface MonitoringProps {
  /** Every function, by the name the dashboard shows. */
  readonly functions: Record<string, IFunction>;
  readonly stateMachine: StateMachine;
  readonly table: ITable;
  /** Queues whose messages mean something was given up on (webhooks, EventBridge deliveries). */
  readonly deadLetterQueues: Record<string, IQueue>;
  readonly httpApi: HttpApi;
  /** The queue of status changes and webhooks: how long its oldest message has waited. */
  readonly notificationQueue: IQueue;
  /** The Step Functions API calls Stepwise makes (their names, as in `AWS/States` `APIName`), GetExecutionHistory apart. */
  readonly stepFunctionsApis: readonly string[];
  /** Alarms notify this address through a topic created here. */
  readonly alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);
/** The custom metrics the functions publish (EMF, namespace Stepwise, dimension service). */
/** Step Functions' API metrics: GetExecutionHistory requests it throttled (account-wide). */
const historyApiThrottles = new cw.Metric({
  namespace: "AWS/States",
  metricName: "ThrottledEvents",
  dimensionsMap: { APIName: "GetExecutionHistory" },
  statistic: "Sum",
  period: FIVE_MINUTES,
});
/** Step Functions' API metrics: requests it throttled, by the API's name (account-wide). */
const apiThrottles = (apiName: string) =>
  new cw.Metric({
    namespace: "AWS/States",
    metricName: "ThrottledEvents",
    dimensionsMap: { APIName: apiName },
    statistic: "Sum",
    period: FIVE_MINUTES,
  });
/**
 * The account's Lambda concurrency in use, as a share of its quota (%): AWS/Usage's count of
 * concurrent executions over SERVICE_QUOTA of it, so the alarm follows the account's own quota (10
 * on many new accounts, 1,000 by default) without a setting.
 */
const accountConcurrencyPercent = new cw.MathExpression({
  label: "Lambda concurrency, % of the account's quota",
  expression: "100 * usage / SERVICE_QUOTA(usage)",
  usingMetrics: {
    usage: new cw.Metric({
      namespace: "AWS/Usage",
      metricName: "ResourceCount",
      dimensionsMap: { Service: "Lambda", Type: "Resource", Resource: "ConcurrentExecutions", Class: "None" },
      statistic: "Maximum",
      period: Duration.minutes(1),
    }),
  },
  period: Duration.minutes(1),
});
const custom = (metricName: string, statistic = "Sum") =>
  new cw.Metric({ namespace: "Stepwise", metricName, dimensionsMap: { service: "stepwise" }, statistic, period: FIVE_MINUTES });

/** Alarms on what needs a person, and one dashboard of the whole service. */
export class Monitoring extends Construct {
  readonly alarms: cw.Alarm[] = [];
  readonly topic?: Topic;
  readonly dashboard: cw.Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    if (props.alarmEmail) {
      this.topic = new Topic(this, "Alarms", { displayName: "Stepwise alarms", enforceSSL: true });
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    }
    const alarm = (name: string, metric: cw.IMetric, threshold: number, description: string) => {
      const created = new cw.Alarm(this, name, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cw.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      if (this.topic) created.addAlarmAction(new SnsAction(this.topic));
      this.alarms.push(created);
      return created;
    };

    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      alarm(
        `${name}NotEmpty`,
        queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: "Maximum" }),
        1,
        `${name}: messages were given up on; read them and redrive.`,
      );
    }
    const sm = props.stateMachine;
    // Not ExecutionsFailed: a run that fails on its own input or agent fails its execution too, and is the user's to read.
    alarm(
      "RunFaults",
      custom(RUN_FAULT_METRIC),
      1,
      "Runs failed for a reason of Stepwise's or of what it depends on (retries spent on the model or AWS, a crashed step): read the run's error; POST /v1/runs/{id}/resume redrives it once fixed.",
    );
    alarm("ExecutionsTimedOut", sm.metricTimedOut({ period: FIVE_MINUTES }), 1, "Executions hit the state machine's time limit.");
    alarm("ExecutionsThrottled", sm.metricThrottled({ period: FIVE_MINUTES }), 1, "Step Functions throttled state transitions.");
    alarm(
      "HistoryApiThrottled",
      historyApiThrottles,
      1,
      "Step Functions throttled GetExecutionHistory (20 calls/s per account, shared with every other user of the account): history checks near a budget and the notifier's counts wait or fail.",
    );
    const otherApiThrottles = new cw.MathExpression({
      label: "Step Functions API calls throttled",
      // FILL: an API nobody called in the period has no data, which must not hide the others' throttles.
      expression: props.stepFunctionsApis.map((_, i) => `FILL(api${i}, 0)`).join(" + "),
      usingMetrics: Object.fromEntries(props.stepFunctionsApis.map((api, i) => [`api${i}`, apiThrottles(api)])),
      period: FIVE_MINUTES,
    });
    alarm(
      "StepFunctionsApiThrottled",
      otherApiThrottles,
      1,
      `Step Functions throttled Stepwise's calls (${props.stepFunctionsApis.join(", ")}): runs start, resume or stop late, or fail as Stepwise.AwsUnavailable once retries are spent.`,
    );
    alarm(
      "NotificationsDelayed",
      props.notificationQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: "Maximum" }),
      300,
      "A notification (a run's end, a webhook, a session's next run) has waited 5 minutes or more: the notifier is failing, throttled or behind.",
    );
    alarm(
      "AccountConcurrencyHigh",
      accountConcurrencyPercent,
      80,
      "The account's Lambda functions use 80 % or more of its concurrency quota: steps, the API and the stream are about to be throttled (ask for a higher quota, or lower maxConcurrency).",
    );
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(`${name}Errors`, fn.metricErrors({ period: FIVE_MINUTES }), 3, `${name}: invocations failed (retried steps included).`);
      alarm(`${name}Throttles`, fn.metricThrottles({ period: FIVE_MINUTES }), 1, `${name}: Lambda throttled invocations.`);
    }
    const tableThrottles = props.table.metricThrottledRequestsForOperations({
      operations: [
        Operation.GET_ITEM,
        Operation.PUT_ITEM,
        Operation.UPDATE_ITEM,
        Operation.DELETE_ITEM,
        Operation.QUERY,
        Operation.BATCH_WRITE_ITEM,
      ],
      period: FIVE_MINUTES,
    });
    alarm("TableThrottled", tableThrottles, 1, "DynamoDB throttled requests.");
    alarm("Api5xx", props.httpApi.metricServerError({ period: FIVE_MINUTES }), 5, "The HTTP API answered 5xx.");

    this.dashboard = new cw.Dashboard(this, "Dashboard", { defaultInterval: Duration.hours(6) });
    const graph = (title: string, left: cw.IMetric[], width = 8) => new cw.GraphWidget({ title, left, width, height: 6 });
    const perFunction = (metric: (fn: IFunction) => cw.IMetric) => Object.values(props.functions).map(metric);
    this.dashboard.addWidgets(
      new cw.AlarmStatusWidget({ title: "Alarms", alarms: this.alarms, width: 24, height: 4 }),
      graph(
        "Runs",
        ["RunsStarted", "RunsSucceeded", "RunsFailed", "RunsTimedOut", "RunsCancelled"].map((m) => custom(m)),
      ),
      graph("Executions", [sm.metricStarted(), sm.metricSucceeded(), sm.metricFailed(), sm.metricTimedOut(), sm.metricThrottled()]),
      graph("Step Functions API throttles", [historyApiThrottles, otherApiThrottles]),
      graph("Run faults and notification age", [custom(RUN_FAULT_METRIC), props.notificationQueue.metricApproximateAgeOfOldestMessage()]),
      graph("Lambda concurrency (% of the account's quota)", [accountConcurrencyPercent]),
      graph("Interrupts", [custom("InterruptsOpened"), custom("InterruptsResolved")]),
      graph("Model latency (ms)", [custom("ModelLatency", "Average"), custom("ModelLatency", "p90")]),
      graph("Model tokens", [custom("ModelPromptTokens"), custom("ModelCompletionTokens")]),
      graph("Webhooks", [custom("WebhookDeliveries"), custom("WebhookFailedAttempts"), custom("WebhookDeadLetters")]),
      graph(
        "Lambda errors",
        perFunction((fn) => fn.metricErrors()),
      ),
      graph(
        "Lambda throttles",
        perFunction((fn) => fn.metricThrottles()),
      ),
      graph(
        "Lambda duration p90",
        perFunction((fn) => fn.metricDuration({ statistic: "p90" })),
      ),
      graph("DynamoDB", [tableThrottles, props.table.metricConsumedReadCapacityUnits(), props.table.metricConsumedWriteCapacityUnits()]),
      graph(
        "Dead letters",
        Object.values(props.deadLetterQueues).map((q) => q.metricApproximateNumberOfMessagesVisible()),
      ),
      graph("HTTP API", [
        props.httpApi.metricCount(),
        props.httpApi.metricClientError(),
        props.httpApi.metricServerError(),
        props.httpApi.metricLatency(),
      ]),
    );
  }
}
