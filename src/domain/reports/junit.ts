// JUnit XML from oc-exec's own event stream (--junit FILE), for the CI systems that read it
// (GitLab, Jenkins, Buildkite, CircleCI, Azure Pipelines, the GitHub test-report actions). Pure: the
// collector sees the events a command writes, and renders one document at the end.
//
// One test case per turn (a single turn; each turn of a conversation; each task of a batch or a
// merge). A case fails for every class but success: <failure type=CLASS message=MESSAGE>. A task
// the batch did not run is <skipped> with the reason; one --resume skipped because it had already
// succeeded passes, and says so. The shape is Jenkins's junit-10.xsd, which allows no properties on a
// test case: model, tokens and cost go in the case's <system-out>, with the final message's tail.
import type { OcEvent, ResultEvent } from "../../contract/schema.js";

type Case = {
  name: string;
  timeSec: number;
  status:
    | { kind: "passed"; note: string | null }
    | { kind: "failure"; type: string; message: string; detail: string }
    | { kind: "skipped"; message: string };
  out: string;
};

/** The characters XML 1.0 allows: everything else (NUL, ESC, lone surrogates, U+FFFE/F) is dropped. */
const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlText(value: string): string {
  return value.replace(FORBIDDEN, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function xmlAttr(value: string): string {
  return xmlText(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

const TEXT_TAIL = 2000;
const seconds = (ms: number) => (ms / 1000).toFixed(3);

function caseOut(result: ResultEvent): string {
  const u = result.usage;
  const lines = [
    `class: ${result.class} (exit ${result.exit_code})`,
    `model: ${result.model ?? "unknown"}`,
    `tokens: ${u.total} (${u.input} in, ${u.output} out, ${u.reasoning} reasoning, ${u.cache_read} cache read)`,
    `cost_usd: ${result.cost_usd}`,
    `steps: ${result.steps}; tools: ${result.tools.total} (${result.tools.failed} failed, ${result.tools.denied} denied)`,
    ...(result.session_id ? [`session: ${result.session_id}`] : []),
  ];
  if (result.text) {
    const tail = result.text.length > TEXT_TAIL ? `…${result.text.slice(-TEXT_TAIL)}` : result.text;
    lines.push("", "final message:", tail);
  }
  return lines.join("\n");
}

function fromResult(name: string, result: ResultEvent): Case {
  const message = result.error?.message ?? result.class;
  return {
    name,
    timeSec: result.duration_ms / 1000,
    status:
      result.class === "success"
        ? { kind: "passed", note: null }
        : {
            kind: "failure",
            type: result.class,
            message,
            detail: `exit ${result.exit_code}: ${result.error ? `${result.error.name}: ${result.error.message}` : result.class}`,
          },
    out: caseOut(result),
  };
}

export type JunitSuite = { name: string; timestamp: string; cases: Case[]; properties: [string, string][] };

/** Collects the cases from the events a command writes, in order; `suite()` is the document's content. */
export class JunitCollector {
  private readonly results = new Map<string, ResultEvent>();
  private readonly order: string[] = [];
  private started: string | null = null;
  private end: OcEvent | null = null;
  private version: string | null = null;

  constructor(private readonly name: string) {}

  observe(event: OcEvent): void {
    if (event.type === "run.started") {
      this.started ??= event.time;
      this.version ??= event.oc_exec_version;
    }
    if (event.type === "result") {
      const key = event.task_id ?? (event.turn !== undefined ? `turn ${event.turn}` : "turn");
      if (!this.results.has(key)) this.order.push(key);
      this.results.set(key, event);
    }
    if (event.type === "batch.result" || event.type === "conversation.result") this.end = event;
  }

  suite(now: Date = new Date()): JunitSuite {
    const properties: [string, string][] = [];
    if (this.version) properties.push(["oc_exec_version", this.version]);
    let cases: Case[];
    const end = this.end;
    if (end?.type === "batch.result") {
      cases = end.tasks.map((task): Case => {
        const result = this.results.get(task.id);
        if (task.run === "not_run")
          return {
            name: task.id,
            timeSec: 0,
            status: { kind: "skipped", message: task.error?.message ?? "the batch stopped before this task ran" },
            out: `not run: ${task.error?.message ?? "the batch stopped before this task ran"}`,
          };
        if (task.run === "skipped" && !result)
          return {
            name: task.id,
            timeSec: task.duration_ms / 1000,
            status: { kind: "passed", note: "skipped on resume: it had already succeeded" },
            out: "skipped on resume: it had already succeeded in the --resume stream",
          };
        if (result) return fromResult(task.id, result);
        return {
          name: task.id,
          timeSec: task.duration_ms / 1000,
          status: {
            kind: "failure",
            type: task.class,
            message: task.error?.message ?? task.class,
            detail: `exit ${task.exit_code}`,
          },
          out: `class: ${task.class} (exit ${task.exit_code})`,
        };
      });
      properties.push(
        ["exit_code", String(end.exit_code)],
        ["cost_usd", String(end.cost_usd)],
        ["tokens", String(end.usage.total)],
      );
      for (const problem of end.problems) properties.push(["problem", problem]);
    } else {
      cases = this.order.map((key) => fromResult(key, this.results.get(key)!));
      if (end?.type === "conversation.result")
        properties.push(
          ["exit_code", String(end.exit_code)],
          ["cost_usd", String(end.cost_usd)],
          ["tokens", String(end.usage.total)],
        );
      else if (cases.length === 1) {
        const only = this.results.get(this.order[0]!)!;
        properties.push(
          ["exit_code", String(only.exit_code)],
          ["cost_usd", String(only.cost_usd)],
          ["tokens", String(only.usage.total)],
        );
      }
    }
    return {
      name: this.name,
      timestamp: (this.started ?? now.toISOString()).replace(/\.\d+Z$/, "").replace(/Z$/, ""),
      cases,
      properties,
    };
  }
}

/** The document: one <testsuites> with one <testsuite>. */
export function renderJunit(suite: JunitSuite): string {
  const failures = suite.cases.filter((c) => c.status.kind === "failure").length;
  const skipped = suite.cases.filter((c) => c.status.kind === "skipped").length;
  const time = seconds(suite.cases.reduce((sum, c) => sum + c.timeSec * 1000, 0));
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlAttr(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="0" time="${time}">`,
    `  <testsuite name="${xmlAttr(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}" timestamp="${xmlAttr(suite.timestamp)}">`,
  ];
  if (suite.properties.length > 0) {
    lines.push("    <properties>");
    for (const [name, value] of suite.properties)
      lines.push(`      <property name="${xmlAttr(name)}" value="${xmlAttr(value)}"/>`);
    lines.push("    </properties>");
  }
  for (const c of suite.cases) {
    lines.push(
      `    <testcase name="${xmlAttr(c.name)}" classname="${xmlAttr(suite.name)}" time="${seconds(c.timeSec * 1000)}">`,
    );
    const s = c.status;
    if (s.kind === "skipped") lines.push(`      <skipped message="${xmlAttr(s.message)}"/>`);
    if (s.kind === "failure")
      lines.push(
        `      <failure type="${xmlAttr(s.type)}" message="${xmlAttr(s.message)}">${xmlText(s.detail)}</failure>`,
      );
    lines.push(`      <system-out>${xmlText(c.out)}</system-out>`);
    lines.push("    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}
