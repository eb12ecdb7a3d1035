// Issue 33's render-time refusals: the PostgreSQL connection budget (Σ over the Deployments with a
// pool of (maxReplicas + maxSurge) × DB_POOL_MAX + the migration hooks + the reserve may not exceed
// database.maxConnections), and what a production render requires (an image digest, NetworkPolicy
// peers for PostgreSQL and NATS, a real runbook address). The table in docs/kubernetes.md is
// generated from the rendered production example (scripts/gen-connection-budget.mjs) and must be
// what the script prints now.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { budgetOf, budgetTable, docSection, productionBudget, type Budget } from '../../scripts/gen-connection-budget.mjs';
import { named, parseObjects, render, RELEASE, ROOT, spec, template, VALUE_SETS } from './helm.js';

const env = (objects: ReturnType<typeof parseObjects>, kind: string, name: string) =>
  Object.fromEntries(
    (spec(named(objects, kind, name)).template.spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [e.name, e]),
  );

let production: Budget;
beforeAll(() => {
  production = productionBudget();
});

describe('the connection budget', () => {
  it('counts every pooled Deployment at its autoscaler maximum plus surge, the hooks and the reserve', () => {
    const byName = Object.fromEntries(production.rows.map((r) => [r.name, r]));
    expect(Object.keys(byName).sort()).toEqual(['auth', 'dispatcher', 'events', 'job', 'policy', 'submission']);
    // The dispatchers' autoscaler (KEDA in production) reaches 10 replicas; 25 % surge of 10 rounds up to 3.
    expect(byName.dispatcher).toMatchObject({ max: 10, surge: 3, pool: 5, connections: 65 });
    // A standby events replica waits on the feed writer's lock with one connection beyond its pool.
    expect(byName.events).toMatchObject({ max: 3, surge: 1, pool: 11, connections: 44 });
    expect(production.hooks).toBe(5);
    expect(production.total).toBe(production.rows.reduce((a, r) => a + r.connections, 0) + production.hooks + production.reserved);
    expect(production.total).toBeLessThanOrEqual(production.maxConnections);
  });

  it('refuses to render above database.maxConnections, naming the numbers, exactly where the script puts the total', async () => {
    const at = await template(VALUE_SETS.production!, [`database.maxConnections=${production.total}`]);
    expect(at.code, at.stderr).toBe(0);
    const over = await template(VALUE_SETS.production!, [`database.maxConnections=${production.total - 1}`]);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain(`= ${production.total} > database.maxConnections ${production.total - 1}`);
    expect(over.stderr).toContain('dispatcher (10+3)×5');
    expect(over.stderr).toContain('events (3+1)×11');
    expect(over.stderr).toContain('5 migration hook Job(s)×1');
  });

  it.each([
    ['a dispatcher scale-out the pools cannot afford', ['services.dispatcher.keda.maxReplicas=40']],
    ['a bigger pool for auth', ['services.auth.database.poolMax=50']],
    ['the CPU HPA in KEDA\'s place, going further', ['services.dispatcher.keda.enabled=false', 'services.dispatcher.hpa.maxReplicas=60']],
    ['a larger surge', ['default.strategy.rollingUpdate.maxSurge=100%']],
  ])('refuses %s', async (_what, sets) => {
    const r = await template(VALUE_SETS.production!, sets);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/connection budget exceeded: .* = \d+ > database\.maxConnections 400/);
  });

  it('renders DB_POOL_MAX from each service\'s pool, and one connection for each migration Job', async () => {
    const objects = await render(VALUE_SETS.production!);
    expect(env(objects, 'Deployment', `${RELEASE}-auth`).DB_POOL_MAX.value).toBe('10');
    expect(env(objects, 'Deployment', `${RELEASE}-events`).DB_POOL_MAX.value).toBe('11');
    expect(env(objects, 'Deployment', `${RELEASE}-dispatcher`).DB_POOL_MAX.value).toBe('5');
    expect(env(objects, 'Deployment', `${RELEASE}-gateway`).DB_POOL_MAX).toBeUndefined();
    expect(env(objects, 'Job', `${RELEASE}-auth-migrate`).DB_POOL_MAX.value).toBe('1');
    // Every values set CI renders fits its own budget.
    for (const [name, files] of Object.entries(VALUE_SETS)) {
      const r = await template(files);
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
    }
  });

  it('is the table docs/kubernetes.md shows (regenerate: node scripts/gen-connection-budget.mjs)', () => {
    const doc = readFileSync(`${ROOT}docs/kubernetes.md`, 'utf8');
    expect(docSection(doc), 'the generated section of docs/kubernetes.md').toBe(budgetTable(production));
    expect(doc).toContain(`max_connections: "${production.maxConnections}"`);
    // The table follows the numbers: another budget is another table.
    const other = budgetOf([], { reservedConnections: 1, maxConnections: 2 });
    expect(budgetTable(other)).not.toBe(budgetTable(production));
  });
});

describe('a production render', () => {
  it.each([
    ['without an image digest', ['image.digest='], /production needs image.digest/],
    ['without PostgreSQL peers in the NetworkPolicy', ['networkPolicy.database.to=null'], /production needs networkPolicy.database.to/],
    ['without NATS peers in the NetworkPolicy', ['networkPolicy.nats.to=null'], /production needs networkPolicy.nats.to/],
    [
      'with the placeholder runbook address',
      ['prometheusRule.runbookBaseUrl=https://github.com/example/partner-submission-service/blob/main/docs/operations.md'],
      /production needs prometheusRule.runbookBaseUrl/,
    ],
  ])('fails %s', async (_what, sets, message) => {
    const r = await template(VALUE_SETS.production!, sets);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('pins the image by digest; dev and Tilt may run a tag', async () => {
    const prod = await render(VALUE_SETS.production!);
    const image = spec(named(prod, 'Deployment', `${RELEASE}-gateway`)).template.spec.containers[0].image as string;
    expect(image).toMatch(/^registry\.example\.com\/partner\/partner-submission-service@sha256:[a-f0-9]{64}$/);
    for (const set of ['dev', 'tilt'] as const) {
      const objects = await render(VALUE_SETS[set]!);
      expect(spec(named(objects, 'Deployment', `${RELEASE}-gateway`)).template.spec.containers[0].image, set).toBe('partner-submission-service:dev');
    }
  });

  it('gives the events service and the dispatcher the key-encryption key (webhook secrets sealed at rest), from the same Secret', async () => {
    const objects = await render(VALUE_SETS.production!);
    const kek = env(objects, 'Deployment', `${RELEASE}-auth`).AUTH_KEY_ENCRYPTION_KEY.valueFrom;
    expect(kek).toEqual({ secretKeyRef: { name: 'partner-auth-kek', key: 'key-encryption-key' } });
    for (const svc of ['submission', 'events', 'dispatcher']) expect(env(objects, 'Deployment', `${RELEASE}-${svc}`).AUTH_KEY_ENCRYPTION_KEY.valueFrom, svc).toEqual(kek);
    for (const svc of ['policy', 'job', 'worker', 'gateway']) expect(env(objects, 'Deployment', `${RELEASE}-${svc}`).AUTH_KEY_ENCRYPTION_KEY, svc).toBeUndefined();
  });

  it('takes the webhook ports from webhooks.allowedPorts only', async () => {
    const r = await template(VALUE_SETS.production!, ['services.dispatcher.env.WEBHOOK_ALLOWED_PORTS=1234']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/WEBHOOK_ALLOWED_PORTS is webhooks.allowedPorts/);
  });
});
