// Chart checks of issue 16 (production operations): one drain knob drives the grace period, the
// preStop sleep's budget and the processes' shutdown budget; every alert parses as PromQL (Prometheus's
// own grammar, @prometheus-io/lezer-promql), has a runbook section, and ratio/latency alerts are
// guarded; the dashboard has a uid per release and the operations panels.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parser } from '@prometheus-io/lezer-promql';
import { byKind, NAMESPACE, parseObjects, render, RELEASE, ROOT, SERVICES, spec, template, VALUE_SETS, type K8sObject } from './helm.js';

let production: K8sObject[];
let defaults: K8sObject[];
beforeAll(async () => {
  [production, defaults] = await Promise.all([
    render(VALUE_SETS.production!, ['prometheusRule.enabled=true', 'dashboards.enabled=true']),
    render([]),
  ]);
});

const deployment = (objects: K8sObject[], svc: string) => byKind(objects, 'Deployment').find((d) => d.metadata.name === `${RELEASE}-${svc}`)!;
const envOf = (d: K8sObject) => Object.fromEntries((spec(d).template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [e.name, e.value]));

describe('drains', () => {
  it('derive the grace period and SHUTDOWN_DRAIN_MS from drainSeconds, with room for preStop and the exit', async () => {
    for (const objects of [production, defaults]) {
      for (const svc of SERVICES) {
        const d = deployment(objects, svc);
        const pod = spec(d).template.spec;
        const drainMs = Number(envOf(d).SHUTDOWN_DRAIN_MS);
        const preStop = Number(pod.containers[0].lifecycle?.preStop?.exec?.command?.[1] ?? 0);
        // The kubelet's SIGKILL comes after preStop + drain + the process's own 10 s for pools and telemetry.
        expect(pod.terminationGracePeriodSeconds * 1000, svc).toBeGreaterThan(preStop * 1000 + drainMs + 10_000);
      }
      // Transfers run up to the ingress's 120 s: the gateway and the submission service drain that long.
      for (const svc of ['gateway', 'submission']) expect(Number(envOf(deployment(objects, svc)).SHUTDOWN_DRAIN_MS), svc).toBeGreaterThanOrEqual(120_000);
    }
    const custom = await render(VALUE_SETS.production!, ['services.gateway.drainSeconds=300', 'services.submission.drainSeconds=300']);
    const gw = deployment(custom, 'gateway');
    expect(envOf(gw).SHUTDOWN_DRAIN_MS).toBe('300000');
    expect(spec(gw).template.spec.terminationGracePeriodSeconds).toBeGreaterThan(310);
  });

  it('give no transfer longer than the drain: the gateway\'s receive and transfer deadlines are its drainSeconds, or shorter', async () => {
    for (const objects of [production, defaults]) {
      const gw = envOf(deployment(objects, 'gateway'));
      expect(gw.REQUEST_RECEIVE_TIMEOUT_MS).toBe(gw.SHUTDOWN_DRAIN_MS);
      expect(gw.ATTACHMENT_TRANSFER_TIMEOUT_MS).toBe(gw.SHUTDOWN_DRAIN_MS);
      // The submission service holds the other end of every transfer: it drains at least as long.
      expect(Number(envOf(deployment(objects, 'submission')).SHUTDOWN_DRAIN_MS)).toBeGreaterThanOrEqual(Number(gw.SHUTDOWN_DRAIN_MS));
    }
    const longer = await render(VALUE_SETS.production!, ['services.gateway.drainSeconds=300', 'services.submission.drainSeconds=300']);
    expect(envOf(deployment(longer, 'gateway')).ATTACHMENT_TRANSFER_TIMEOUT_MS).toBe('300000');
    const shorter = await render(VALUE_SETS.production!, ['services.gateway.env.REQUEST_RECEIVE_TIMEOUT_MS=60000']);
    expect(envOf(deployment(shorter, 'gateway')).REQUEST_RECEIVE_TIMEOUT_MS).toBe('60000');
    for (const [sets, message] of [
      [['services.gateway.env.REQUEST_RECEIVE_TIMEOUT_MS=300000'], /REQUEST_RECEIVE_TIMEOUT_MS \(300000 ms\) is longer than the gateway's drain \(drainSeconds 120\)/],
      [['services.gateway.env.ATTACHMENT_TRANSFER_TIMEOUT_MS=121000'], /ATTACHMENT_TRANSFER_TIMEOUT_MS \(121000 ms\) is longer/],
      [['services.gateway.drainSeconds=300'], /services.submission.drainSeconds \(120\) is shorter than services.gateway.drainSeconds \(300\)/],
    ] as const) {
      const r = await template(VALUE_SETS.production!, [...sets]);
      expect(r.code, sets.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(message);
    }
  });
});

/** Parses a PromQL expression; returns the metric names it selects, or throws at a syntax error. */
function promql(text: string): string[] {
  // Grafana's own interval variable is not PromQL; a duration stands in for it.
  const expr = text.replace(/\$__rate_interval/g, '5m');
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError) error ??= n.from;
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') names.push(expr.slice(n.from, n.to));
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error}: ${expr.slice(Math.max(0, error - 30), error + 30)}`);
  return names;
}

interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}
const rules = (objects: K8sObject[]): Rule[] =>
  (spec(byKind(objects, 'PrometheusRule')[0]).groups as { rules: Rule[] }[]).flatMap((g) => g.rules);
const dashboard = (objects: K8sObject[]) =>
  JSON.parse((byKind(objects, 'ConfigMap').find((c) => c.metadata.name === `${RELEASE}-dashboards`) as unknown as { data: Record<string, string> }).data['partner-overview.json']!) as {
    uid: string;
    title: string;
    panels: { title: string; targets?: { expr: string }[] }[];
  };

describe('alerts', () => {
  it('every expression parses as PromQL and names at least one metric; the parser does reject bad ones', () => {
    expect(() => promql('sum(rate(x[5m]) > ')).toThrow(/syntax error/);
    for (const r of rules(production)) expect(promql(r.expr).length, r.alert).toBeGreaterThan(0);
    for (const p of dashboard(production).panels) for (const t of p.targets ?? []) expect(promql(t.expr).length, p.title).toBeGreaterThan(0);
  });

  it('every alert has a runbook_url pointing at its own section of docs/operations.md, under the configured base', async () => {
    const docs = readFileSync(`${ROOT}docs/operations.md`, 'utf8');
    const all = rules(production);
    expect(all.length).toBeGreaterThanOrEqual(17);
    for (const r of all) {
      expect(r.annotations.runbook_url, r.alert).toMatch(new RegExp(`^https://.+/docs/operations\\.md#${r.alert.toLowerCase()}$`));
      expect(docs, `docs/operations.md has a section for ${r.alert}`).toContain(`\n### ${r.alert}\n`);
    }
    const custom = rules(await render(VALUE_SETS.production!, ['prometheusRule.enabled=true', 'prometheusRule.runbookBaseUrl=https://runbooks.example.org/ops/']));
    expect(custom[0]!.annotations.runbook_url).toBe(`https://runbooks.example.org/ops#${custom[0]!.alert.toLowerCase()}`);
  });

  it('has the on-call alerts: absent targets, gRPC errors, pool waits, outbox failures and age, redeliveries, lag, waiter cap', () => {
    const byName = Object.fromEntries(rules(production).map((r) => [r.alert, r]));
    for (const [alert, metric] of [
      ['PartnerTargetAbsent', 'up'],
      ['PartnerGrpcErrorRatio', 'partner_grpc_server_handled_total'],
      ['PartnerDbPoolWaiting', 'partner_db_pool_waiting_requests'],
      ['PartnerJobOutboxPublishFailures', 'partner_job_outbox_publish_failures_total'],
      ['PartnerJobOutboxOldestAge', 'partner_job_outbox_oldest_age_seconds'],
      ['PartnerWorkerRedeliveries', 'partner_worker_consumer_redelivered'],
      ['PartnerWorkerConsumerLag', 'partner_worker_consumer_pending'],
      ['PartnerGatewayWaitersAtCap', 'partner_gateway_wait_rejected_total'],
      ['PartnerGatewayPartnerAtWaitCap', 'partner_gateway_partners_at_wait_cap'],
      ['PartnerMetricSourceFailing', 'partner_metric_source_failures_total'],
      ['PartnerRequestLogDropping', 'partner_request_log_dropped_total'],
      ['PartnerRequestLogLag', 'partner_request_log_writer_pending_batches'],
      ['PartnerRequestLogLag', 'partner_request_log_writer_lag_seconds_bucket'],
      ['PartnerRequestLogPartitionJobStale', 'partner_request_log_partition_job_last_success_timestamp_seconds'],
    ] as const) {
      expect(byName[alert], alert).toBeDefined();
      expect(promql(byName[alert]!.expr), alert).toContain(metric);
    }
    // One absent() per component of the release.
    for (const svc of SERVICES) expect(byName.PartnerTargetAbsent!.expr).toContain(`absent(up{namespace="${NAMESPACE}",job="${RELEASE}-${svc}"})`);
  });

  it('guards ratio alerts with a minimum request rate and keeps Prefer: wait out of the latency alert', () => {
    const byName = Object.fromEntries(rules(production).map((r) => [r.alert, r]));
    for (const alert of ['PartnerApiHighErrorRatio', 'PartnerGrpcErrorRatio', 'PartnerApiHighLatencyP99']) {
      expect(byName[alert]!.expr, alert).toMatch(/\n\s*and( on \(\))?\n\s*sum.*\[5m\]\)\) > 1\s*$/);
    }
    const latency = byName.PartnerApiHighLatencyP99!.expr;
    expect(latency.match(/prefer_wait="false"/g)?.length).toBe(2);
  });
});

describe('dashboard', () => {
  it('has a uid and title of its own per release, and panels for gRPC, DB pool, waiters, queue depth and age, accepted vs settled', async () => {
    const d = dashboard(production);
    // The same release renders the same uid; another namespace (another release) another one.
    expect(dashboard(await render(VALUE_SETS.production!, ['prometheusRule.enabled=true', 'dashboards.enabled=true'])).uid).toBe(d.uid);
    const r = await template(VALUE_SETS.production!, ['dashboards.enabled=true'], ['--namespace', 'another-namespace']);
    expect(dashboard(parseObjects(r.stdout)).uid).not.toBe(d.uid);
    expect(d.uid.length).toBeLessThanOrEqual(40);
    expect(d.title).toContain(`${NAMESPACE}/${RELEASE}`);
    const uses = (metric: string) => d.panels.some((p) => (p.targets ?? []).some((t) => promql(t.expr).includes(metric)));
    for (const metric of [
      'partner_grpc_server_handled_total',
      'partner_grpc_client_handling_seconds_bucket',
      'partner_db_pool_waiting_requests',
      'partner_db_pool_connections',
      'partner_gateway_waiting_requests',
      'partner_gateway_max_waiters',
      'partner_worker_consumer_pending',
      'partner_job_outbox_oldest_age_seconds',
      'partner_jobs_accepted_total',
      'partner_jobs_settled_total',
    ]) {
      expect(uses(metric), metric).toBe(true);
    }
  });

  it('shows settled jobs by outcome, cancelled ones beside succeeded and failed', () => {
    const panel = dashboard(production).panels.find((p) => p.title === 'Jobs accepted vs settled')!;
    const byOutcome = (panel.targets ?? []).find((t) => promql(t.expr).includes('partner_jobs_settled_total') && /by \(outcome\)/.test(t.expr)) as
      | { expr: string; legendFormat?: string }
      | undefined;
    expect(byOutcome, 'a settled-by-outcome series').toBeDefined();
    const outcomes = /outcome=~"([^"]+)"/.exec(byOutcome!.expr)?.[1]?.split('|');
    expect(outcomes?.sort()).toEqual(['canceled', 'failed', 'succeeded']);
    expect(byOutcome!.legendFormat).toBe('{{outcome}}/s');
  });
});

describe('image', () => {
  it('builds on Node 22 LTS by default, and production pins the base by digest and shows it on every pod', async () => {
    const dockerfile = readFileSync(`${ROOT}Dockerfile`, 'utf8');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m);
    const prod = byKind(production, 'Deployment');
    expect(prod).toHaveLength(SERVICES.length);
    for (const d of prod) {
      expect(spec(d).template.metadata.annotations?.['partner-submission/base-image'], d.metadata.name).toMatch(/^node:22-bookworm-slim@sha256:[a-f0-9]{64}$/);
    }
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toMatch(/>=22/);
  });
});
