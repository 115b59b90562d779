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

export interface MonitoringProps {
  /** Every function, by the name the dashboard shows. */
  readonly functions: Record<string, IFunction>;
  readonly stateMachine: StateMachine;
  readonly table: ITable;
  /** Queues whose messages mean something was given up on (webhooks, EventBridge deliveries). */
  readonly deadLetterQueues: Record<string, IQueue>;
  readonly httpApi: HttpApi;
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
    alarm("ExecutionsFailed", sm.metricFailed({ period: FIVE_MINUTES }), 1, "Runs failed (see the execution's error and cause).");
    alarm("ExecutionsTimedOut", sm.metricTimedOut({ period: FIVE_MINUTES }), 1, "Executions hit the state machine's time limit.");
    alarm("ExecutionsThrottled", sm.metricThrottled({ period: FIVE_MINUTES }), 1, "Step Functions throttled state transitions.");
    alarm(
      "HistoryApiThrottled",
      historyApiThrottles,
      1,
      "Step Functions throttled GetExecutionHistory (20 calls/s per account, shared with every other user of the account): history checks near a budget and the notifier's counts wait or fail.",
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
      graph("Step Functions API throttles", [historyApiThrottles]),
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
