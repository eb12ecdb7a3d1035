// Checks of the Helm chart (charts/partner-submission) with every values set CI cares about: it lints
// strictly, renders, every object passes the Kubernetes schemas, and the rendered workloads keep the
// properties the design asks for (one Deployment per service, probes, resources, non-root read-only
// containers, secrets only by reference, allow-list network policies, hooks, alerts, dashboard).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_FEATURES,
  byKind,
  CHART,
  GRPC_SERVICES,
  lint,
  named,
  NAMESPACE,
  parseObjects,
  RELEASE,
  ROOT,
  SERVICES,
  spec,
  template,
  VALUE_SETS,
  type K8sObject,
} from './helm.js';
import { validateObject } from './k8s-schema.js';
import { callersOf, entryOf, schemaOwners } from '../../scripts/lib/processes.mjs';

/** Every values set, plus the defaults and the production example with all optional objects on. */
const SETS: Record<string, { files: string[]; sets: string[] }> = {
  ...Object.fromEntries(Object.entries(VALUE_SETS).map(([k, files]) => [k, { files, sets: [] }])),
  'default+all-features': { files: [], sets: ALL_FEATURES },
  'production+all-features': { files: VALUE_SETS.production!, sets: ALL_FEATURES },
};
const SET_NAMES = Object.keys(SETS);

const rendered: Record<string, { text: string; objects: K8sObject[] }> = {};

beforeAll(async () => {
  await Promise.all(
    SET_NAMES.map(async (name) => {
      const { files, sets } = SETS[name]!;
      const r = await template(files, sets);
      if (r.code !== 0) throw new Error(`helm template with ${name} values failed:\n${r.stderr}`);
      rendered[name] = { text: r.stdout, objects: parseObjects(r.stdout) };
    }),
  );
});

const objectsOf = (set: string) => rendered[set]!.objects;
const fullName = (svc: string) => `${RELEASE}-${svc}`;

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: Record<string, unknown>;
  readinessProbe?: Record<string, unknown>;
  startupProbe?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
}

/** Pod spec of a Deployment, Job or Pod. */
function podSpecOf(o: K8sObject) {
  const s = o.kind === 'Pod' ? spec(o) : spec(o)?.template?.spec;
  return s as { containers: Container[]; initContainers?: Container[]; securityContext?: Record<string, unknown> };
}
const containersOf = (o: K8sObject) => [...(podSpecOf(o).initContainers ?? []), ...podSpecOf(o).containers];
const envOf = (c: Container) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
const workloads = (objects: K8sObject[]) => objects.filter((o) => ['Deployment', 'Job', 'Pod'].includes(o.kind));

describe('helm lint --strict', () => {
  it.each(SET_NAMES)('passes with %s values', async (name) => {
    const r = await lint(SETS[name]!.files, SETS[name]!.sets);
    expect(r.stdout + r.stderr).toContain('0 chart(s) failed');
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
});

describe('rendered objects', () => {
  it.each(SET_NAMES)('pass the Kubernetes schemas, with no unknown fields (%s values)', async (name) => {
    const problems = (await Promise.all(objectsOf(name).map(validateObject))).flat();
    expect(problems).toEqual([]);
  });

  it.each(SET_NAMES)('have unique kind/name pairs and the release labels (%s values)', (name) => {
    const ids = objectsOf(name).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of objectsOf(name)) {
      expect(o.metadata.labels?.['app.kubernetes.io/instance'], `${o.kind}/${o.metadata.name}`).toBe(RELEASE);
      expect(o.metadata.labels?.['app.kubernetes.io/name']).toBe('partner-submission');
    }
  });

  it('include the CRD-backed objects only when asked', () => {
    const kinds = (set: string) => new Set(objectsOf(set).map((o) => o.kind));
    for (const kind of ['ServiceMonitor', 'PrometheusRule', 'ScaledObject']) {
      expect(kinds('default').has(kind)).toBe(false);
      expect(kinds('default+all-features').has(kind)).toBe(true);
    }
    expect(kinds('production').has('ServiceMonitor')).toBe(true);
    expect(kinds('production').has('PrometheusRule')).toBe(true);
  });
});

describe('workloads', () => {
  it.each(SET_NAMES)('one Deployment per service, running its own main.js (the dispatcher the events package\'s dispatcher.js) (%s values)', (name) => {
    const deployments = byKind(objectsOf(name), 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(SERVICES.map(fullName).sort());
    for (const svc of SERVICES) {
      const [container, ...others] = containersOf(named(deployments, 'Deployment', fullName(svc))!);
      expect(others).toEqual([]);
      expect(container!.args?.at(-1)).toBe(entryOf(svc));
      expect(envOf(container!).HOST?.value).toBe('0.0.0.0');
    }
  });

  it.each(SET_NAMES)('every Deployment container has startup, liveness and readiness probes (%s values)', (name) => {
    for (const d of byKind(objectsOf(name), 'Deployment')) {
      for (const c of containersOf(d)) {
        expect(c.livenessProbe, `${d.metadata.name} liveness`).toBeDefined();
        expect(c.readinessProbe, `${d.metadata.name} readiness`).toBeDefined();
        expect(c.startupProbe, `${d.metadata.name} startup`).toBeDefined();
        expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'ops' } });
      }
    }
  });

  it('gRPC services are probed with native gRPC health checks on their gRPC port', () => {
    for (const svc of GRPC_SERVICES) {
      const [c] = containersOf(named(objectsOf('default'), 'Deployment', fullName(svc))!);
      const grpcPort = c!.ports!.find((p) => p.name === 'grpc')!.containerPort;
      expect(c!.livenessProbe).toMatchObject({ grpc: { port: grpcPort } });
    }
    for (const svc of ['gateway', 'worker']) {
      const [c] = containersOf(named(objectsOf('default'), 'Deployment', fullName(svc))!);
      expect(c!.livenessProbe).toMatchObject({ httpGet: { path: '/livez', port: 'ops' } });
    }
  });

  it.each(SET_NAMES)('every container has resources and a non-root, locked-down securityContext (%s values)', (name) => {
    for (const w of workloads(objectsOf(name))) {
      const pod = podSpecOf(w);
      const where = `${w.kind}/${w.metadata.name}`;
      expect(pod.securityContext, where).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(Number(pod.securityContext?.runAsUser)).toBeGreaterThan(0);
      for (const c of containersOf(w)) {
        expect(c.resources?.requests?.cpu, `${where} requests.cpu`).toBeDefined();
        expect(c.resources?.requests?.memory, `${where} requests.memory`).toBeDefined();
        expect(c.resources?.limits?.memory, `${where} limits.memory`).toBeDefined();
        expect(c.securityContext, where).toMatchObject({
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        // Only the Tilt loop writes into the container (live_update syncs into /app).
        expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(name !== 'tilt');
      }
    }
  });

  it.each(SET_NAMES)('no container repeats an environment variable (%s values)', (name) => {
    for (const w of workloads(objectsOf(name))) {
      for (const c of containersOf(w)) {
        const names = (c.env ?? []).map((e) => e.name);
        expect(names, `${w.kind}/${w.metadata.name}`).toEqual([...new Set(names)]);
      }
    }
  });

  it('pods never mount an API token and never get service-link variables', () => {
    for (const w of workloads(objectsOf('production+all-features'))) {
      const pod = podSpecOf(w) as unknown as Record<string, unknown>;
      expect(pod.automountServiceAccountToken, w.metadata.name).toBe(false);
      expect(pod.enableServiceLinks, w.metadata.name).toBe(false);
    }
  });

  it('the gateway and the token server get the environment, URLs, audience and scope from values', () => {
    const objects = objectsOf('production');
    const gw = envOf(containersOf(named(objects, 'Deployment', fullName('gateway'))!)[0]!);
    expect(gw.ENVIRONMENT?.value).toBe('production');
    expect(gw.BASE_URL?.value).toBe('https://api.example.com');
    expect(gw.AUTH_ISSUER?.value).toBe('https://auth.example.com');
    expect(gw.AUTH_JWKS_URL?.value).toBe(`http://${fullName('auth')}.${NAMESPACE}.svc.cluster.local:8081/.well-known/jwks.json`);
    const auth = envOf(containersOf(named(objects, 'Deployment', fullName('auth'))!)[0]!);
    expect(auth.AUTH_ISSUER?.value).toBe('https://auth.example.com');
    expect(auth.AUTH_SCOPES?.value).toBe('api.example.com/access');
    expect(auth.AUTH_AUDIENCE?.value).toBe(gw.AUTH_AUDIENCE?.value);
  });

  it('the gateway divides rate limits by its (minimum) replica count', () => {
    const limitReplicas = (set: string) =>
      envOf(containersOf(named(objectsOf(set), 'Deployment', fullName('gateway'))!)[0]!).RATE_LIMIT_REPLICAS?.value;
    expect(limitReplicas('production')).toBe('3');
    expect(limitReplicas('dev')).toBe('1');
  });

  it('the token server trusts X-Forwarded-For only behind a policy that admits just the ingress and known pods', () => {
    for (const set of ['default', 'production']) {
      const objects = objectsOf(set);
      const auth = containersOf(named(objects, 'Deployment', fullName('auth'))!)[0]!;
      expect(envOf(auth).TRUST_PROXY?.value).toBe('true');
      const http = auth.ports!.find((p) => p.name === 'http')!.containerPort;
      const rules = spec(named(objects, 'NetworkPolicy', fullName('auth'))).ingress as { ports: { port: number }[]; from?: unknown[] }[];
      const rule = rules.find((r) => r.ports.some((p) => p.port === http))!;
      expect(rule.from?.length, set).toBeGreaterThan(0);
    }
  });

  it('the token server can serve other environments’ scopes too', async () => {
    const r = await template([], ['auth.extraScopes={api.production.example.com/access}']);
    const auth = envOf(containersOf(named(parseObjects(r.stdout), 'Deployment', fullName('auth'))!)[0]!);
    expect(auth.AUTH_SCOPES?.value).toBe('api.uat.example.com/access,api.production.example.com/access');
  });
});

describe('gRPC addressing', () => {
  it('each gRPC service has a headless Service, and every dialled address points at one', () => {
    const objects = objectsOf('default');
    const headless = new Map<string, number>();
    for (const svc of GRPC_SERVICES) {
      const s = named(objects, 'Service', `${fullName(svc)}-grpc`);
      expect(spec(s)?.clusterIP, svc).toBe('None');
      const port = spec(s).ports.find((p: { name: string }) => p.name === 'grpc');
      expect(port).toMatchObject({ targetPort: 'grpc', appProtocol: 'grpc' });
      headless.set(`${fullName(svc)}-grpc.${NAMESPACE}.svc.cluster.local:${port.port}`, port.port);
    }
    const dialled = byKind(objects, 'Deployment').flatMap((d) =>
      (containersOf(d)[0]!.env ?? []).filter((e) => e.name.endsWith('_GRPC_ADDR')).map((e) => e.value!),
    );
    // The gateway dials five services, the worker four (job, submission, policy, events), the events
    // service auth (the partners an event for every partner goes to); nothing else dials.
    expect(dialled.length).toBe(10);
    for (const address of dialled) expect(headless.has(address), address).toBe(true);
    const gw = envOf(containersOf(named(objects, 'Deployment', fullName('gateway'))!)[0]!);
    expect(Object.keys(gw).filter((k) => k.endsWith('_GRPC_ADDR')).sort()).toEqual(
      ['AUTH_GRPC_ADDR', 'EVENTS_GRPC_ADDR', 'JOB_GRPC_ADDR', 'POLICY_GRPC_ADDR', 'SUBMISSION_GRPC_ADDR'],
    );
  });

  it('every service exposes its ops port on a Service the ServiceMonitor selects', () => {
    const objects = objectsOf('default+all-features');
    const monitor = byKind(objects, 'ServiceMonitor')[0]!;
    const selector = spec(monitor).selector.matchLabels as Record<string, string>;
    for (const svc of SERVICES) {
      const s = named(objects, 'Service', fullName(svc))!;
      expect(s.metadata.labels).toMatchObject(selector);
      expect(spec(s).ports.map((p: { name: string }) => p.name)).toContain('ops');
    }
    for (const svc of GRPC_SERVICES) expect(named(objects, 'Service', `${fullName(svc)}-grpc`)!.metadata.labels).not.toMatchObject(selector);
  });
});

describe('secrets', () => {
  const CREDENTIAL_URL = /\b(postgres(ql)?|nats|tls):\/\/[^\s/@"']*:[^\s/@"']*@/;

  it.each(SET_NAMES)('the chart renders no Secret and no credential-bearing URL (%s values)', (name) => {
    expect(byKind(objectsOf(name), 'Secret')).toEqual([]);
    expect(rendered[name]!.text).not.toMatch(CREDENTIAL_URL);
  });

  it.each(SET_NAMES)('secret-backed variables are secretKeyRefs, never values (%s values)', (name) => {
    for (const w of workloads(objectsOf(name))) {
      for (const c of containersOf(w)) {
        for (const e of c.env ?? []) {
          if (['DATABASE_URL', 'AUTH_KEY_ENCRYPTION_KEY', 'POLICY_CURSOR_SECRET', 'CLIENT_ID', 'CLIENT_SECRET'].includes(e.name)) {
            expect(e.value, `${w.metadata.name} ${e.name}`).toBeUndefined();
            expect(e.valueFrom?.secretKeyRef?.name, `${w.metadata.name} ${e.name}`).toBeTruthy();
          }
        }
      }
    }
  });

  it('NATS credentials and the cursor-signing secret come from Secrets when named', () => {
    const objects = objectsOf('production');
    const job = envOf(containersOf(named(objects, 'Deployment', fullName('job'))!)[0]!);
    expect(job.NATS_URL).toEqual({ name: 'NATS_URL', valueFrom: { secretKeyRef: { name: 'partner-nats', key: 'url' } } });
    expect(job.JOBS_STREAM_REPLICAS?.value).toBe('3');
    const policy = envOf(containersOf(named(objects, 'Deployment', fullName('policy'))!)[0]!);
    expect(policy.POLICY_CURSOR_SECRET?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-policy-cursor', key: 'cursor-secret' });
    const devPolicy = envOf(containersOf(named(objectsOf('dev'), 'Deployment', fullName('policy'))!)[0]!);
    expect(devPolicy.POLICY_CURSOR_SECRET).toBeUndefined();
  });

  it('the signing-key encryption key comes from the named Secret', () => {
    const auth = envOf(containersOf(named(objectsOf('dev'), 'Deployment', fullName('auth'))!)[0]!);
    expect(auth.AUTH_KEY_ENCRYPTION_KEY?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-auth-kek', key: 'key-encryption-key' });
    expect(auth.DATABASE_URL?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-pg-app', key: 'uri' });
    // The submission service seals its receipt keys under the same key, and signs receipts as {base_url}.
    const submission = envOf(containersOf(named(objectsOf('dev'), 'Deployment', fullName('submission'))!)[0]!);
    expect(submission.AUTH_KEY_ENCRYPTION_KEY?.valueFrom?.secretKeyRef).toEqual(auth.AUTH_KEY_ENCRYPTION_KEY?.valueFrom?.secretKeyRef);
    expect(submission.BASE_URL?.value).toMatch(/^https?:\/\/[^/]+$/);
  });

  // A secret-ish value pushed in through every door values offer: the render must refuse it (schema
  // or template), and neither the output nor the error may repeat it.
  const SENTINEL = 'S3NTINEL-must-never-render-7f3a9c';
  it.each([
    ['a database URL in clear', `database.url=postgres://partner:${SENTINEL}@db:5432/partner`],
    ['a database password', `database.password=${SENTINEL}`],
    ['DATABASE_URL as a plain env var of a service', `services.auth.env.DATABASE_URL=postgres://u:${SENTINEL}@db/p`],
    ['the key-encryption key as a plain env var', `default.env.AUTH_KEY_ENCRYPTION_KEY=${SENTINEL}`],
    ['the key-encryption key as a value', `auth.keyEncryptionKey.value=${SENTINEL}`],
    ['NATS_URL with credentials as a plain env var', `services.job.env.NATS_URL=nats://u:${SENTINEL}@nats:4222`],
    ['NATS credentials in nats.url', `nats.url=nats://u:${SENTINEL}@nats:4222`],
    ['the helm-test client secret as a value', `tests.client.secret=${SENTINEL}`],
    ['a cursor-signing secret as a plain env var', `services.policy.env.POLICY_CURSOR_SECRET=${SENTINEL}`],
  ])('refuses %s without echoing it', async (_what, set) => {
    const r = await template([], [set]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).not.toContain(SENTINEL);
  });

  it('renders a secret name, never its content, when the sentinel is a Secret name', async () => {
    const r = await template([], [`database.existingSecret=${SENTINEL.toLowerCase()}`]);
    expect(r.code, r.stderr).toBe(0);
    const objects = parseObjects(r.stdout);
    const policy = envOf(containersOf(named(objects, 'Deployment', fullName('policy'))!)[0]!);
    expect(policy.DATABASE_URL?.valueFrom?.secretKeyRef?.name).toBe(SENTINEL.toLowerCase());
  });
});

describe('values validation', () => {
  it.each([
    ['an unknown environment', ['environment=staging'], /environment/],
    ['a base URL with a path', ['baseUrl=https://api.example.com/v1'], /baseUrl/],
    ['a malformed extra scope', ['auth.extraScopes={api.example.com}'], /extraScopes/],
    ['production over plain http', ['environment=production'], /production needs https/],
    ['a dial of an unknown service', ['services.gateway.dials={auth,billing}'], /billing/],
    ['an unknown key under default', ['default.livenesProbe.periodSeconds=1'], /livenesProbe/],
  ])('rejects %s', async (_what, sets, message) => {
    const extra = sets[0] === 'environment=production' ? ['baseUrl=http://api.example.com', 'authUrl=http://auth.example.com'] : [];
    const r = await template([], [...sets, ...extra]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('lets a service be turned off, with its policies, Services and hooks', async () => {
    const r = await template([], ['services.worker.enabled=false', 'services.submission.enabled=false']);
    expect(r.code, r.stderr).toBe(0);
    const names = parseObjects(r.stdout).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names.filter((n) => n.includes('-worker') || n.includes('-submission'))).toEqual([]);
  });
});

describe('ingress', () => {
  it('routes {base_url} to the gateway and {auth_url} to the token server, with TLS for https', () => {
    const objects = objectsOf('production');
    const api = named(objects, 'Ingress', `${RELEASE}-api`)!;
    const auth = named(objects, 'Ingress', `${RELEASE}-auth`)!;
    expect(spec(api).tls).toEqual([{ hosts: ['api.example.com'], secretName: 'partner-api-tls' }]);
    expect(spec(auth).tls).toEqual([{ hosts: ['auth.example.com'], secretName: 'partner-auth-tls' }]);
    expect(spec(api).rules[0].host).toBe('api.example.com');
    expect(spec(api).rules[0].http.paths).toEqual([
      { path: '/', pathType: 'Prefix', backend: { service: { name: fullName('gateway'), port: { name: 'http' } } } },
    ]);
    expect(spec(auth).rules[0].http.paths.map((p: { path: string }) => p.path)).toEqual(['/oauth2/', '/.well-known/']);
    expect(api.metadata.annotations?.['cert-manager.io/cluster-issuer']).toBe('letsencrypt');
  });

  it('serves plain HTTP on the dev cluster and never routes an ops port', () => {
    for (const set of SET_NAMES) {
      for (const ing of byKind(objectsOf(set), 'Ingress')) {
        const ports = spec(ing).rules.flatMap((r: { http: { paths: { backend: { service: { port: { name: string } } } }[] } }) =>
          r.http.paths.map((p) => p.backend.service.port.name),
        );
        expect(ports.every((p: string) => p === 'http'), `${set} ${ing.metadata.name}`).toBe(true);
      }
    }
    const devApi = named(objectsOf('dev'), 'Ingress', `${RELEASE}-api`)!;
    expect(spec(devApi).tls).toBeUndefined();
    expect(spec(devApi).rules[0].host).toBe('api.localtest.me');
  });
});

describe('network policies', () => {
  type Rule = { ports?: { port: number }[]; from?: unknown[]; to?: unknown[] };
  const componentsOf = (peers: unknown[] | undefined) =>
    (peers ?? [])
      .map((p) => (p as { podSelector?: { matchLabels?: Record<string, string> } }).podSelector?.matchLabels?.['app.kubernetes.io/component'])
      .filter(Boolean)
      .sort();

  it.each(SET_NAMES.filter((s) => s !== 'tilt'))('deny by default every pod of the release (%s values)', (name) => {
    const deny = named(objectsOf(name), 'NetworkPolicy', `${RELEASE}-default-deny`)!;
    expect(spec(deny)).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'partner-submission', 'app.kubernetes.io/instance': RELEASE } },
      policyTypes: ['Ingress', 'Egress'],
    });
    for (const svc of SERVICES) expect(named(objectsOf(name), 'NetworkPolicy', fullName(svc)), svc).toBeDefined();
  });

  it('let into a gRPC port only the services that dial it', () => {
    const objects = objectsOf('default');
    // The registry's callers (test/registry.test.ts checks its calls against the chart's dials).
    const expected = Object.fromEntries(GRPC_SERVICES.map((svc) => [svc, callersOf(svc).sort()]));
    for (const svc of GRPC_SERVICES) {
      const port = containersOf(named(objects, 'Deployment', fullName(svc))!)[0]!.ports!.find((p) => p.name === 'grpc')!.containerPort;
      const rules = (spec(named(objects, 'NetworkPolicy', fullName(svc))).ingress as Rule[]).filter((r) =>
        r.ports?.some((p) => p.port === port),
      );
      expect(rules).toHaveLength(1);
      expect(componentsOf(rules[0]!.from)).toEqual(expected[svc]);
    }
  });

  it('never open a gRPC port or a peer-to-peer path to everyone', () => {
    for (const set of SET_NAMES) {
      for (const np of byKind(objectsOf(set), 'NetworkPolicy')) {
        for (const rule of (spec(np).ingress ?? []) as Rule[]) {
          const port = rule.ports?.[0]?.port ?? 0;
          if (port >= 50000) expect(rule.from?.length, `${set} ${np.metadata.name} ${port}`).toBeGreaterThan(0);
        }
        for (const rule of (spec(np).egress ?? []) as Rule[]) {
          const port = rule.ports?.[0]?.port ?? 0;
          if (port >= 50000 || port === 8080 || port === 8081) expect(rule.to?.length, `${set} ${np.metadata.name} ${port}`).toBeGreaterThan(0);
        }
      }
    }
  });

  it('restrict database and NATS egress to the configured peers', () => {
    const np = spec(named(objectsOf('dev'), 'NetworkPolicy', fullName('job')));
    const egress = np.egress as Rule[];
    expect(egress.find((r) => r.ports?.[0]?.port === 5432)?.to).toEqual([{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'partner-pg' } } }]);
    expect(egress.find((r) => r.ports?.[0]?.port === 4222)?.to).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'nats' } } }]);
    const gateway = spec(named(objectsOf('dev'), 'NetworkPolicy', fullName('gateway'))).egress as Rule[];
    expect(gateway.some((r) => r.ports?.[0]?.port === 5432)).toBe(false);
  });
});

describe('scaling and disruption', () => {
  it('lets the webhook dispatcher reach receivers outside the private ranges, and nothing else out to the internet', () => {
    const objects = objectsOf('production');
    const np = spec(named(objects, 'NetworkPolicy', fullName('dispatcher')));
    const web = (np.egress as { ports?: { port: number }[]; to?: { ipBlock?: { cidr: string; except?: string[] } }[] }[]).find((r) =>
      r.to?.some((t) => t.ipBlock?.cidr === '0.0.0.0/0'),
    )!;
    // The ports webhooks.allowedPorts lists: the same list the gateway checks at registration.
    expect(web.ports!.map((p) => p.port)).toEqual([443, 8443]);
    const [v4, v6] = web.to!.map((t) => t.ipBlock!);
    expect(v4!.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8']));
    expect(v6).toMatchObject({
      cidr: '::/0',
      except: expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128', '::/96', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '2002::/16']),
    });
    // No other component may go out to the internet.
    for (const svc of SERVICES.filter((s) => s !== 'dispatcher')) {
      const egress = spec(named(objects, 'NetworkPolicy', fullName(svc))).egress as { to?: { ipBlock?: { cidr: string } }[] }[];
      expect(egress.some((r) => r.to?.some((t) => t.ipBlock?.cidr === '0.0.0.0/0')), svc).toBe(false);
    }
    // The dev cluster's receivers may be plain http: its values add 80, to the policy and the setting alike.
    const dev = spec(named(objectsOf('dev'), 'NetworkPolicy', fullName('dispatcher')));
    const devWeb = (dev.egress as { ports?: { port: number }[]; to?: { ipBlock?: { cidr: string } }[] }[]).find((r) => r.to?.some((t) => t.ipBlock?.cidr === '0.0.0.0/0'));
    expect(devWeb!.ports!.map((p) => p.port)).toEqual([443, 8443, 80]);
    for (const svc of ['gateway', 'dispatcher']) {
      expect(envOf(containersOf(named(objects, 'Deployment', fullName(svc))!)[0]!).WEBHOOK_ALLOW_LOOPBACK_TARGETS?.value, svc).toBe('false');
    }
    for (const [set, ports] of [['production', '443,8443'], ['default', '443,8443'], ['dev', '443,8443,80']] as const) {
      for (const svc of SERVICES) {
        const value = envOf(containersOf(named(objectsOf(set), 'Deployment', fullName(svc))!)[0]!).WEBHOOK_ALLOWED_PORTS?.value;
        expect(value, `${set} ${svc}`).toBe(['gateway', 'events', 'dispatcher'].includes(svc) ? ports : undefined);
      }
    }
  });

  it('autoscales the gateway, the workers and the webhook dispatchers, and leaves replicas to the autoscaler', () => {
    const objects = objectsOf('default');
    const scaled = ['dispatcher', 'gateway', 'worker'];
    expect(byKind(objects, 'HorizontalPodAutoscaler').map((h) => h.metadata.name).sort()).toEqual(scaled.map(fullName));
    for (const svc of SERVICES) {
      const replicas = spec(named(objects, 'Deployment', fullName(svc))).replicas;
      if (scaled.includes(svc)) expect(replicas, svc).toBeUndefined();
      else expect(replicas, svc).toBe(2);
    }
  });

  it('scales the workers on JetStream consumer lag through the NATS headless Service, and the dispatchers on the oldest delivery, with KEDA', () => {
    const objects = objectsOf('default+all-features');
    for (const svc of ['worker', 'dispatcher']) expect(named(objects, 'HorizontalPodAutoscaler', fullName(svc)), svc).toBeUndefined();
    const worker = named(objects, 'ScaledObject', fullName('worker'))!;
    expect(spec(worker).scaleTargetRef).toEqual({ name: fullName('worker') });
    // KEDA dials <server_name>.<this host> on a cluster: the host must be the headless Service, fully qualified.
    expect(spec(worker).triggers).toEqual([
      {
        type: 'nats-jetstream',
        metadata: {
          natsServerMonitoringEndpoint: `nats-headless.${NAMESPACE}.svc.cluster.local:8222`,
          useHttps: 'false',
          account: '$G',
          stream: 'partner_JOBS',
          consumer: 'workers',
          lagThreshold: '20',
        },
      },
    ]);
    const dispatcher = named(objects, 'ScaledObject', fullName('dispatcher'))!;
    expect(spec(dispatcher).triggers).toEqual([
      {
        type: 'prometheus',
        metadata: {
          serverAddress: 'http://prometheus-operated.monitoring.svc:9090',
          query: `max(partner_webhook_oldest_pending_age_seconds{namespace="${NAMESPACE}",job="${fullName('dispatcher')}"})`,
          threshold: '60',
          ignoreNullValues: 'true',
        },
      },
    ]);
    for (const so of [worker, dispatcher]) {
      expect(spec(so).fallback, so.metadata.name).toEqual({ failureThreshold: 3, replicas: 4 });
      const behavior = spec(so).advanced.horizontalPodAutoscalerConfig.behavior;
      expect(behavior.scaleDown.stabilizationWindowSeconds, so.metadata.name).toBe(300);
      expect(behavior.scaleUp.policies.length, so.metadata.name).toBeGreaterThan(0);
    }
    // Production names the NATS cluster's headless Service in its own namespace, as given.
    const prod = named(objectsOf('production+all-features'), 'ScaledObject', fullName('worker'))!;
    expect(spec(prod).triggers[0].metadata.natsServerMonitoringEndpoint).toBe('nats-headless.messaging.svc.cluster.local:8222');
  });

  it('has a policy/v1 PodDisruptionBudget per service that lets unready pods be evicted', () => {
    const pdbs = byKind(objectsOf('production'), 'PodDisruptionBudget');
    expect(pdbs.every((p) => p.apiVersion === 'policy/v1')).toBe(true);
    expect(pdbs.map((p) => p.metadata.name).sort()).toEqual(SERVICES.map(fullName).sort());
    for (const p of pdbs) expect(spec(p).unhealthyPodEvictionPolicy, p.metadata.name).toBe('AlwaysAllow');
  });

  it("spreads each rollout's own pods (matchLabelKeys: pod-template-hash)", () => {
    for (const d of byKind(objectsOf('production'), 'Deployment')) {
      const spread = spec(d).template.spec.topologySpreadConstraints as { topologyKey: string; matchLabelKeys?: string[] }[];
      expect(spread.map((c) => c.topologyKey), d.metadata.name).toEqual(['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
      for (const c of spread) expect(c.matchLabelKeys, d.metadata.name).toEqual(['pod-template-hash']);
    }
  });
});

describe('hooks', () => {
  it('migrates every service with SQL migrations in a pre-install/pre-upgrade Job', () => {
    const jobs = byKind(objectsOf('default'), 'Job');
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual(schemaOwners().sort().map((s) => `${fullName(s)}-migrate`));
    for (const job of jobs) {
      const svc = job.metadata.name.replace(`${RELEASE}-`, '').replace(/-migrate$/, '');
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(containersOf(job)[0]!.args).toEqual([`services/${svc}/dist/main.js`, 'migrate']);
      expect(envOf(containersOf(job)[0]!).DATABASE_URL?.valueFrom?.secretKeyRef).toBeDefined();
    }
    expect(byKind(objectsOf('tilt'), 'Job')).toEqual([]);
  });

  it('has a helm test pod that gets a token with the test client and calls /v1/health', () => {
    const pod = named(objectsOf('default'), 'Pod', `${RELEASE}-test-health`)!;
    expect(pod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const c = containersOf(pod)[0]!;
    expect(c.args?.slice(0, 2)).toEqual(['--input-type=module', '-e']);
    expect(c.args?.[2]).toBe(readFileSync(`${ROOT}${CHART}/files/helm-test.mjs`, 'utf8'));
    const env = envOf(c);
    expect(env.TOKEN_URL?.value).toBe(`http://${fullName('auth')}.${NAMESPACE}.svc.cluster.local:8081/oauth2/token`);
    expect(env.HEALTH_URL?.value).toBe(`http://${fullName('gateway')}.${NAMESPACE}.svc.cluster.local:8080/v1/health`);
    expect(env.SCOPE?.value).toBe('api.uat.example.com/access');
    expect(env.CLIENT_ID?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-helm-test-client', key: 'client-id' });
    expect(env.CLIENT_SECRET?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-helm-test-client', key: 'client-secret' });
  });
});

describe('observability', () => {
  const KNOWN_METRICS = [
    'partner_gateway_http_requests_total',
    'partner_gateway_http_request_duration_seconds_bucket',
    'partner_gateway_token_verification_failures_total',
    'partner_auth_tokens_refused_total',
    'partner_jobs_settled_total',
    'partner_job_settle_latency_seconds_bucket',
    'partner_job_outbox_backlog',
    'partner_worker_consumer_pending',
    'partner_worker_consumer_ack_pending',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_p99_seconds',
    'up',
    'partner_gateway_http_request_duration_seconds_count',
    'partner_grpc_server_handled_total',
    'partner_grpc_client_handling_seconds_bucket',
    'partner_db_pool_connections',
    'partner_db_pool_waiting_requests',
    'partner_db_pool_max_connections',
    'partner_gateway_waiting_requests',
    'partner_gateway_max_waiters',
    'partner_gateway_wait_rejected_total',
    'partner_gateway_partners_at_wait_cap',
    'partner_gateway_wait_outcomes_total',
    'partner_jobs_accepted_total',
    'partner_job_outbox_oldest_age_seconds',
    'partner_job_outbox_publish_failures_total',
    'partner_worker_consumer_redelivered',
    'partner_metric_source_failures_total',
    'partner_webhook_oldest_pending_age_seconds',
    'partner_webhook_attempts_total',
    'partner_webhook_pending_deliveries',
    'partner_clearance_review_oldest_age_seconds',
    'partner_clearance_decisions_total',
    'partner_quote_referrals_overdue',
    'partner_quote_referrals_waiting',
    'partner_quote_referral_oldest_age_seconds',
    'partner_quote_referral_decisions',
    'partner_policy_sweep_last_success_seconds',
    'partner_policy_transitions_total',
    'partner_event_outbox_backlog',
    'partner_event_outbox_oldest_age_seconds',
    'partner_events_writer_pending',
    'partner_events_store_delay_seconds_bucket',
    'partner_request_log_dropped_total',
    'partner_request_log_writer_pending_batches',
    'partner_request_log_writer_lag_seconds_bucket',
    'partner_request_log_partition_job_last_success_timestamp_seconds',
  ];
  const metricsIn = (expr: string) =>
    [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\s*\{/g)].map((m) => m[1]!).filter((n) => !['by', 'on', 'without', 'sum', 'max'].includes(n));
  const balanced = (expr: string) => {
    let depth = 0;
    for (const ch of expr) {
      if ('({['.includes(ch)) depth++;
      if (')}]'.includes(ch)) depth--;
      if (depth < 0) return false;
    }
    return depth === 0;
  };

  it('alerts on 5xx ratio, p99 latency, jobs not settling, consumer lag, outbox backlog and token failures', () => {
    const rule = byKind(objectsOf('production'), 'PrometheusRule')[0]!;
    const rules = (spec(rule).groups as { rules: { alert: string; expr: string; annotations: Record<string, string> }[] }[]).flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'PartnerApiHighErrorRatio',
        'PartnerApiHighLatencyP99',
        'PartnerJobsNotSettling',
        'PartnerWorkerConsumerLag',
        'PartnerJobOutboxBacklog',
        'PartnerTokenVerificationFailuresSpike',
        'PartnerTokenRequestsRefusedSpike',
      ]),
    );
    for (const r of rules) {
      expect(balanced(r.expr), r.alert).toBe(true);
      const metrics = metricsIn(r.expr);
      expect(metrics.length, r.alert).toBeGreaterThan(0);
      for (const m of metrics) expect(KNOWN_METRICS, `${r.alert} uses ${m}`).toContain(m);
      expect(r.expr, r.alert).toMatch(new RegExp(`namespace="${NAMESPACE}",job(=~"${RELEASE}-\\.\\+"|="${RELEASE}-[a-z]+")`));
      expect(r.annotations.summary, r.alert).toBeTruthy();
    }
    // Prometheus' own templates survive Helm untouched.
    expect(rules.find((r) => r.alert === 'PartnerApiHighErrorRatio')!.annotations.description).toContain('{{ $value | humanizePercentage }}');
  });

  it('ships a Grafana dashboard over the same metrics, for the sidecar to pick up', () => {
    const cm = named(objectsOf('production'), 'ConfigMap', `${RELEASE}-dashboards`)!;
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    const dashboard = JSON.parse((cm as unknown as { data: Record<string, string> }).data['partner-overview.json']!) as {
      uid: string;
      panels: { type: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.uid).toMatch(/^partner-[0-9a-f]{12}$/);
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const used = new Set(exprs.flatMap(metricsIn));
    for (const m of used) expect(KNOWN_METRICS, m).toContain(m);
    // `up` and the latency histogram's _count (the alerts' request-rate guard) need no panel of their own.
    for (const m of KNOWN_METRICS.filter((k) => k !== 'up' && k !== 'partner_gateway_http_request_duration_seconds_count')) {
      expect(used.has(m), `dashboard shows ${m}`).toBe(true);
    }
    for (const e of exprs) expect(balanced(e), e).toBe(true);
  });
});
