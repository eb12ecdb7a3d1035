// Validates rendered objects against the Kubernetes OpenAPI schemas shipped in kubernetes-models
// (Kubernetes 1.27 API). Those schemas accept unknown fields, which is how typos ("livenesProbe",
// "securityContext" one level too deep) slip through; so validation also records which fields the
// schema looked at and reports every field it never read. Custom resources (ServiceMonitor,
// PrometheusRule, ScaledObject) have no schema there and are checked structurally below.
import type { K8sObject } from './helm.js';

type Validator = { prototype: { validate(this: unknown): void } };

const modelCache = new Map<string, Promise<Validator | undefined>>();

async function modelFor(apiVersion: string, kind: string): Promise<Validator | undefined> {
  const key = `${apiVersion}/${kind}`;
  let p = modelCache.get(key);
  if (!p) {
    // "v1" → kubernetes-models/v1, "apps/v1" → kubernetes-models/apps/v1
    p = import(/* @vite-ignore */ `kubernetes-models/${apiVersion}`).then(
      (mod: Record<string, unknown>) => mod[kind] as Validator | undefined,
      () => undefined,
    );
    modelCache.set(key, p);
  }
  return p;
}

/** Wraps an object so every property read is recorded; lists the fields nobody read afterwards. */
function readTracker(root: object) {
  const read = new WeakMap<object, Set<string>>();
  const wrap = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const target = value as object;
    if (!read.has(target)) read.set(target, new Set());
    return new Proxy(target, {
      get(t, prop, receiver) {
        if (typeof prop === 'string') read.get(t)!.add(prop);
        return wrap(Reflect.get(t, prop, receiver));
      },
    });
  };
  const unread = (value: unknown, path: string, out: string[]): string[] => {
    if (value === null || typeof value !== 'object') return out;
    const seen = read.get(value as object);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const p = `${path}/${k}`;
      if (!Array.isArray(value) && seen && !seen.has(k)) out.push(p);
      else unread(v, p, out);
    }
    return out;
  };
  return { proxy: wrap(root), unknownFields: () => unread(root, '', []) };
}

export const CUSTOM_KINDS = new Set([
  'monitoring.coreos.com/v1/ServiceMonitor',
  'monitoring.coreos.com/v1/PrometheusRule',
  'keda.sh/v1alpha1/ScaledObject',
]);

/** Problems of one object (empty when it is valid). */
export async function validateObject(obj: K8sObject): Promise<string[]> {
  const where = `${obj.kind} ${obj.metadata?.name ?? '(no name)'}`;
  const custom = `${obj.apiVersion}/${obj.kind}`;
  if (CUSTOM_KINDS.has(custom)) return validateCustom(obj).map((p) => `${where}: ${p}`);
  const model = await modelFor(obj.apiVersion, obj.kind);
  if (!model) return [`${where}: no Kubernetes schema for ${obj.apiVersion} ${obj.kind}`];
  const problems: string[] = [];
  const tracker = readTracker(JSON.parse(JSON.stringify(obj)) as object);
  try {
    model.prototype.validate.call(tracker.proxy);
  } catch (err) {
    problems.push(`${where}: ${(err as Error).message}`);
  }
  for (const field of tracker.unknownFields()) problems.push(`${where}: unknown field ${field}`);
  return problems;
}

// --- Custom resources: the fields the chart uses, checked against the CRDs' documented shapes. ---

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function onlyKeys(o: Record<string, unknown>, allowed: string[], path: string, out: string[]) {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) out.push(`unknown field ${path}/${k}`);
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

function validateCustom(obj: K8sObject): string[] {
  const out: string[] = [];
  onlyKeys(obj as unknown as Record<string, unknown>, ['apiVersion', 'kind', 'metadata', 'spec'], '', out);
  if (!isStr(obj.metadata?.name)) out.push('metadata.name is required');
  const spec = (obj as unknown as Record<string, unknown>).spec;
  if (!isObj(spec)) return [...out, 'spec is required'];
  switch (obj.kind) {
    case 'ServiceMonitor': {
      onlyKeys(spec, ['selector', 'namespaceSelector', 'endpoints', 'jobLabel', 'targetLabels'], '/spec', out);
      if (!isObj(spec.selector)) out.push('spec.selector is required');
      const endpoints = spec.endpoints;
      if (!Array.isArray(endpoints) || endpoints.length === 0) out.push('spec.endpoints needs at least one endpoint');
      for (const [i, ep] of (Array.isArray(endpoints) ? endpoints : []).entries()) {
        if (!isObj(ep)) {
          out.push(`spec.endpoints[${i}] must be an object`);
          continue;
        }
        onlyKeys(ep, ['port', 'path', 'interval', 'scrapeTimeout', 'scheme', 'relabelings', 'metricRelabelings'], `/spec/endpoints/${i}`, out);
        if (!isStr(ep.port)) out.push(`spec.endpoints[${i}].port must name a Service port`);
        for (const d of ['interval', 'scrapeTimeout'] as const) {
          if (ep[d] !== undefined && !(typeof ep[d] === 'string' && DURATION.test(ep[d]))) out.push(`spec.endpoints[${i}].${d} is not a duration`);
        }
      }
      break;
    }
    case 'PrometheusRule': {
      onlyKeys(spec, ['groups'], '/spec', out);
      const groups = Array.isArray(spec.groups) ? spec.groups : [];
      if (groups.length === 0) out.push('spec.groups needs at least one group');
      for (const [gi, g] of groups.entries()) {
        if (!isObj(g) || !isStr(g.name)) {
          out.push(`spec.groups[${gi}].name is required`);
          continue;
        }
        onlyKeys(g, ['name', 'interval', 'rules'], `/spec/groups/${gi}`, out);
        for (const [ri, r] of (Array.isArray(g.rules) ? g.rules : []).entries()) {
          const at = `spec.groups[${gi}].rules[${ri}]`;
          if (!isObj(r)) {
            out.push(`${at} must be an object`);
            continue;
          }
          onlyKeys(r, ['alert', 'record', 'expr', 'for', 'labels', 'annotations'], `/${at}`, out);
          if (!isStr(r.alert) && !isStr(r.record)) out.push(`${at} needs alert or record`);
          if (!isStr(r.expr)) out.push(`${at}.expr is required`);
          if (r.for !== undefined && !(typeof r.for === 'string' && DURATION.test(r.for))) out.push(`${at}.for is not a duration`);
          for (const m of ['labels', 'annotations'] as const) {
            if (r[m] !== undefined && !(isObj(r[m]) && Object.values(r[m]).every((v) => typeof v === 'string'))) {
              out.push(`${at}.${m} must map strings to strings`);
            }
          }
        }
      }
      break;
    }
    case 'ScaledObject': {
      onlyKeys(
        spec,
        ['scaleTargetRef', 'minReplicaCount', 'maxReplicaCount', 'pollingInterval', 'cooldownPeriod', 'idleReplicaCount', 'triggers', 'advanced', 'fallback'],
        '/spec',
        out,
      );
      if (!isObj(spec.scaleTargetRef) || !isStr(spec.scaleTargetRef.name)) out.push('spec.scaleTargetRef.name is required');
      for (const n of ['minReplicaCount', 'maxReplicaCount', 'pollingInterval', 'cooldownPeriod'] as const) {
        if (spec[n] !== undefined && !Number.isInteger(spec[n])) out.push(`spec.${n} must be an integer`);
      }
      const triggers = Array.isArray(spec.triggers) ? spec.triggers : [];
      if (triggers.length === 0) out.push('spec.triggers needs at least one trigger');
      for (const [i, t] of triggers.entries()) {
        if (!isObj(t) || !isStr(t.type) || !isObj(t.metadata)) {
          out.push(`spec.triggers[${i}] needs type and metadata`);
          continue;
        }
        // KEDA reads trigger metadata as strings only.
        for (const [k, v] of Object.entries(t.metadata)) if (typeof v !== 'string') out.push(`spec.triggers[${i}].metadata.${k} must be a string`);
      }
      break;
    }
  }
  return out;
}
