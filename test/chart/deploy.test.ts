// Checks of what cannot be run here (no Docker engine, kind or Tilt on the build machines): the
// Dockerfile, .dockerignore, Tiltfile and the dev-cluster files in deploy/ are read and cross-checked,
// so a renamed file, a copy the build context no longer holds or a dev value pointing at the wrong
// Secret fails in CI instead of on a developer's laptop.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART, parseObjects, RELEASE, ROOT, SERVICES, template, VALUE_SETS } from './helm.js';
import { workspaceDirs } from '../../scripts/lib/workspaces.mjs';

const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- YAML documents are checked field by field
const yamlOf = (path: string): any => parse(read(path));

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/** Dockerfile → stages of instructions (continuation lines joined, comments dropped). */
function dockerStages(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of logical) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op!.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      stages.push({ from: m[1]!, name: m[2] ?? String(stages.length), instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push({ op: op!.toUpperCase(), args });
    }
  }
  return stages;
}

// Glob of .dockerignore to RegExp: "**" + "/" spans any directories (or none); "*" and "?" stay within one segment.
function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (glob.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (glob.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += '\\^$.|+()[]{}'.includes(ch) ? `\\${ch}` : ch;
  }
  return new RegExp(`^${re}$`);
}

/**
 * Whether .dockerignore lets a path into the build context: the last pattern matching the path or one
 * of its parent directories decides, `!` patterns letting it back in (Docker's rules).
 */
function dockerContextAllows(path: string): boolean {
  const rules = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => ({ negate: l.startsWith('!'), re: globToRegExp(l.replace(/^!/, '').replace(/\/$/, '')) }));
  const segments = path.split('/');
  const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let allowed = true;
  for (const rule of rules) if (prefixes.some((p) => rule.re.test(p))) allowed = rule.negate;
  return allowed;
}

describe('Dockerfile', () => {
  const stages = dockerStages(read('Dockerfile'));
  const runtime = stages.at(-1)!;
  const all = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op);

  it('builds the runtime by default: production dependencies only, compiled output, non-root, tini as PID 1', () => {
    expect(runtime.name).toBe('runtime');
    expect(all(runtime, 'RUN').some((r) => /npm ci --omit=dev/.test(r.args))).toBe(true);
    const user = all(runtime, 'USER').at(-1)?.args ?? '';
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(JSON.parse(all(runtime, 'ENTRYPOINT').at(-1)!.args)).toEqual(['/usr/bin/tini', '--', 'node']);
    expect(all(runtime, 'COPY').some((c) => /--from=build \/out\/services\//.test(c.args))).toBe(true);
  });

  it('uses the UID the chart runs as', () => {
    const values = yamlOf(`${CHART}/values.yaml`);
    expect(all(runtime, 'USER').at(-1)!.args.split(':')[0]).toBe(String(values.default.podSecurityContext.runAsUser));
  });

  it('has the dev target Tilt builds, owned by the same user', () => {
    const dev = stages.find((s) => s.name === 'dev')!;
    expect(dev).toBeDefined();
    expect(all(dev, 'USER').at(-1)!.args).toBe(all(runtime, 'USER').at(-1)!.args);
    expect(read('Tiltfile')).toMatch(/target='dev'/);
  });

  it('copies a narrow list from the context, all of it inside the .dockerignore allow-list', () => {
    const sources = stages.flatMap((s) =>
      all(s, 'COPY')
        .filter((c) => !c.args.includes('--from='))
        .flatMap((c) => c.args.split(/\s+/).filter((a) => !a.startsWith('--')).slice(0, -1)),
    );
    expect(sources).not.toContain('.');
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) {
      const path = src.replace(/\/$/, '');
      expect(existsSync(`${ROOT}${path}`), `${src} exists`).toBe(true);
      expect(dockerContextAllows(path), `${src} is in the build context`).toBe(true);
    }
  });

  it('gets every npm workspace and every tsc -b project into the image build', () => {
    const workspaces = workspaceDirs();
    const references = (JSON.parse(read('tsconfig.json')) as { references: { path: string }[] }).references.map((r) => r.path);
    const copied = stages.find((s) => s.name === 'build')!.instructions.filter((i) => i.op === 'COPY').map((c) => c.args);
    for (const dir of new Set([...workspaces, ...references])) {
      expect(dockerContextAllows(`${dir}/package.json`), `${dir} is in the build context`).toBe(true);
      expect(dockerContextAllows(`${dir}/tsconfig.json`), `${dir} is in the build context`).toBe(true);
      const top = dir.split('/')[0]!;
      expect(copied.some((c) => c.startsWith(`${top}/ `)), `the build stage copies ${top}/`).toBe(true);
      const manifests = stages.find((s) => s.name === 'manifests')!;
      expect(manifests.instructions.some((i) => i.op === 'COPY' && i.args.startsWith(`${top}/ `)), `manifests copies ${top}/`).toBe(true);
    }
  });

  it('gives every npm ci all workspace manifests', () => {
    for (const stage of stages.filter((s) => all(s, 'RUN').some((r) => /npm ci/.test(r.args)))) {
      expect(all(stage, 'COPY').some((c) => c.args === '--from=manifests /app/ ./'), `${stage.name} copies the manifests tree`).toBe(true);
    }
  });

  it('keeps host build output, dependencies, tests and unrelated trees out of the context', () => {
    for (const path of ['node_modules', 'services/gateway/node_modules', 'services/auth/dist', 'sdk/client/dist', 'sdk/cli/tsconfig.tsbuildinfo', 'services/shared/src/generated', 'services/auth/src/keys.test.ts', 'test', 'charts', '.git', '.local', 'Dockerfile']) {
      expect(dockerContextAllows(path), path).toBe(false);
    }
    for (const path of ['services/auth/src/app.ts', 'services/auth/migrations/0001_init.sql', 'proto/partner', 'package-lock.json']) {
      expect(dockerContextAllows(path), path).toBe(true);
    }
  });
});

describe('Tiltfile', () => {
  const tilt = read('Tiltfile');

  it('is syntactically valid Starlark (checked with the Python parser, which reads the same syntax)', () => {
    try {
      execFileSync('python3', ['-c', 'import ast,sys; ast.parse(open(sys.argv[1]).read())', `${ROOT}Tiltfile`], { stdio: 'pipe' });
    } catch (err) {
      const e = err as { code?: string; stderr?: Buffer };
      if (e.code === 'ENOENT') throw new Error('python3 is needed to parse the Tiltfile (it comes with yamllint: apt-get install -y yamllint)');
      throw new Error(`Tiltfile does not parse: ${e.stderr?.toString() ?? String(err)}`);
    }
  });

  it('installs NATS and the PostgreSQL operator with helm_resource, and our chart with helm()', () => {
    expect(tilt).toContain("load('ext://helm_resource', 'helm_resource', 'helm_repo')");
    expect(tilt).toMatch(/helm_resource\(\s*'nats',\s*'nats\/nats'/);
    expect(tilt).toMatch(/helm_resource\(\s*'cnpg-operator',\s*'cnpg\/cloudnative-pg'/);
    expect(tilt).toMatch(/k8s_yaml\(helm\(\s*'charts\/partner-submission'/);
  });

  it('references files that exist', () => {
    const paths = [...tilt.matchAll(/'((?:deploy|charts)\/[^']+)'/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(4);
    for (const p of paths) expect(existsSync(`${ROOT}${p}`), p).toBe(true);
  });

  it('builds from a context the Dockerfile can use, live-updates sources and rebuilds on a lockfile change', () => {
    const only = /only=\[([^\]]*)\]/.exec(tilt)![1]!;
    const entries = [...only.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
    for (const e of entries) {
      expect(existsSync(`${ROOT}${e}`), e).toBe(true);
      expect(dockerContextAllows(e), `${e} passes .dockerignore`).toBe(true);
    }
    // Dependencies change by an image build, never by `npm ci` in a pod (no registry egress there).
    expect(tilt).toMatch(/fall_back_on\(\['package\.json', 'package-lock\.json'/);
    expect(tilt).toMatch(/sync\('services', '\/app\/services'\)/);
    expect(tilt).toMatch(/labels=\['infra'\]/);
    expect(tilt).toMatch(/labels=\['app'\]/);
  });

  it('names resources after the Deployments the chart renders, and forwards the API and token server ports', async () => {
    expect(tilt).toContain(`RELEASE = '${RELEASE}'`);
    // Tilt's resources are the registry's processes (SERVICES), read from the same file.
    expect(tilt).toMatch(/^SERVICES = read_json\('services\/processes\.json'\)\['processes'\]\.keys\(\)$/m);
    const r = await template(VALUE_SETS.tilt!);
    const deployments = parseObjects(r.stdout).filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name);
    for (const svc of SERVICES) expect(deployments).toContain(`${RELEASE}-${svc}`);
    expect(tilt).toMatch(/k8s_resource\(RELEASE \+ '-gateway', port_forwards=\['8080:8080'/);
    expect(tilt).toMatch(/k8s_resource\(RELEASE \+ '-auth', port_forwards=\['8081:8081'\]\)/);
  });
});

describe('dev cluster files', () => {
  it('kind maps the ingress ports to localhost on a node labelled for the ingress controller', () => {
    const kind = yamlOf('deploy/kind.yaml');
    expect(kind).toMatchObject({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4', name: 'partner' });
    const cp = kind.nodes.find((n: { role: string }) => n.role === 'control-plane');
    expect(cp.extraPortMappings).toEqual(
      expect.arrayContaining([expect.objectContaining({ containerPort: 80 }), expect.objectContaining({ containerPort: 443 })]),
    );
    expect(cp.kubeadmConfigPatches.join('\n')).toContain('ingress-ready=true');
    const ingress = yamlOf('deploy/ingress-nginx-values.yaml');
    expect(ingress.controller.nodeSelector).toEqual({ 'ingress-ready': 'true' });
    expect(ingress.controller.hostPort.enabled).toBe(true);
    expect(read('Tiltfile')).toContain("allow_k8s_contexts('kind-partner')");
  });

  it('dev values point at the Secret CloudNativePG writes for the Cluster in deploy/postgres.yaml', () => {
    const docs = parseAllDocuments(read('deploy/postgres.yaml')).map((d) => d.toJS());
    const cluster = docs.find((d) => d?.kind === 'Cluster');
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec.bootstrap.initdb).toMatchObject({ database: 'partner', owner: 'partner' });
    const dev = yamlOf('deploy/dev-values.yaml');
    expect(dev.database).toMatchObject({ existingSecret: `${cluster.metadata.name}-app`, urlKey: 'uri' });
    expect(dev.networkPolicy.database.to[0].podSelector.matchLabels).toEqual({ 'cnpg.io/cluster': cluster.metadata.name });
    expect(read('Tiltfile')).toContain(`objects=['${cluster.metadata.name}:cluster']`);
  });

  it('dev values dial the NATS release the Tiltfile installs, with JetStream on', () => {
    const nats = yamlOf('deploy/nats-values.yaml');
    expect(nats.config.jetstream.enabled).toBe(true);
    const dev = yamlOf('deploy/dev-values.yaml');
    expect(new URL(dev.nats.url).hostname).toBe('nats');
    // KEDA's scaler reads the servers' monitoring port through the chart's headless Service (nats-headless).
    expect(dev.nats.monitoringEndpoint).toBe(`nats-headless:${nats.config.monitor.port}`);
    expect(dev.networkPolicy.nats.to[0].podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'nats' });
  });

  it('the Tiltfile creates the key-encryption-key Secret the dev values name', () => {
    const dev = yamlOf('deploy/dev-values.yaml');
    const tilt = read('Tiltfile');
    expect(tilt).toContain(`secret_yaml_generic('${dev.auth.keyEncryptionKey.existingSecret}', namespace=NAMESPACE, from_file='${dev.auth.keyEncryptionKey.key}=`);
    expect(tilt).toContain(".local/");
  });

  it('the production example keeps PostgreSQL and NATS outside, credentials in Secrets', () => {
    const prod = yamlOf('deploy/production-values.yaml');
    expect(prod.environment).toBe('production');
    expect(prod.database.existingSecret).toBeTruthy();
    expect(prod.nats.existingSecret).toBeTruthy();
    expect(prod.networkPolicy.database.to.length).toBeGreaterThan(0);
    expect(prod.networkPolicy.nats.to.length).toBeGreaterThan(0);
  });
});
