/**
 * The attribute names of the OpenTelemetry GenAI semantic conventions, version 1.41.0 (the last
 * release of docs/gen-ai/ in open-telemetry/semantic-conventions: gen-ai-spans.md for `chat` and
 * `execute_tool`, gen-ai-agent-spans.md for `invoke_agent`), pinned here by hand from that text so
 * a span Stepwise emits is checked against the convention, not against Stepwise's own code.
 * Attributes outside the gen_ai namespace are Stepwise's own (`stepwise.*`) or general ones.
 */
export const CONVENTION_VERSION = "1.41.0";

const INFERENCE = [
  "gen_ai.operation.name",
  "gen_ai.provider.name",
  "error.type",
  "gen_ai.conversation.id",
  "gen_ai.output.type",
  "gen_ai.request.choice.count",
  "gen_ai.request.model",
  "gen_ai.request.seed",
  "server.port",
  "gen_ai.request.frequency_penalty",
  "gen_ai.request.max_tokens",
  "gen_ai.request.presence_penalty",
  "gen_ai.request.stop_sequences",
  "gen_ai.request.temperature",
  "gen_ai.request.top_k",
  "gen_ai.request.top_p",
  "gen_ai.response.finish_reasons",
  "gen_ai.response.id",
  "gen_ai.response.model",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "server.address",
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.system_instructions",
];

export const CONVENTION: Record<string, { attributes: string[]; required: string[]; kind: "internal" | "client"; spanName: RegExp }> = {
  chat: { attributes: INFERENCE, required: ["gen_ai.operation.name", "gen_ai.provider.name"], kind: "client", spanName: /^chat \S+$/ },
  invoke_agent: {
    attributes: [
      ...INFERENCE,
      "gen_ai.agent.description",
      "gen_ai.agent.id",
      "gen_ai.agent.name",
      "gen_ai.data_source.id",
      "gen_ai.tool.definitions",
    ],
    required: ["gen_ai.operation.name", "gen_ai.provider.name"],
    kind: "internal",
    spanName: /^invoke_agent .+$/,
  },
  execute_tool: {
    attributes: [
      "gen_ai.operation.name",
      "error.type",
      "gen_ai.tool.call.id",
      "gen_ai.tool.description",
      "gen_ai.tool.name",
      "gen_ai.tool.type",
      "gen_ai.tool.call.arguments",
      "gen_ai.tool.call.result",
    ],
    required: ["gen_ai.operation.name"],
    kind: "internal",
    spanName: /^execute_tool \S+$/,
  },
};

/** One OTLP/JSON span, as GET /v1/runs/{id}/trace gives it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code?: number; message?: string };
}

/** What is wrong with a span by the pinned convention (none: it conforms). */
export function conventionProblems(span: OtlpSpan): string[] {
  const names = span.attributes.map((a) => a.key);
  const operation = span.attributes.find((a) => a.key === "gen_ai.operation.name")?.value.stringValue as string | undefined;
  const rule = operation ? CONVENTION[operation] : undefined;
  if (!rule) return [`${span.name}: gen_ai.operation.name is ${operation ?? "missing"}`];
  const problems = [
    ...rule.required.filter((name) => !names.includes(name)).map((name) => `${span.name}: ${name} is required`),
    ...names
      .filter((name) => !name.startsWith("stepwise.") && !rule.attributes.includes(name))
      .map((name) => `${span.name}: ${name} is not an attribute of ${operation} spans in ${CONVENTION_VERSION}`),
  ];
  if (!rule.spanName.test(span.name)) problems.push(`${span.name}: not named as ${operation} spans are`);
  if (span.kind !== (rule.kind === "client" ? 3 : 1)) problems.push(`${span.name}: kind ${span.kind}`);
  if (!/^[0-9a-f]{32}$/.test(span.traceId) || !/^[0-9a-f]{16}$/.test(span.spanId)) problems.push(`${span.name}: ids are not OTLP/JSON hex`);
  if (BigInt(span.endTimeUnixNano) < BigInt(span.startTimeUnixNano)) problems.push(`${span.name}: ends before it starts`);
  return problems;
}
