// The Tilt dev loop as written must work on kind, which enforces NetworkPolicy (issue 16): nothing in
// it needs registry egress from a pod, the infra charts are pinned, the namespace is explicit, and the
// ports the app and KEDA dial are ports the NATS Service actually publishes (deploy/nats-values.yaml
// for the official nats/nats chart, whose Service publishes the client port and, only when asked,
// the monitoring port).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { byKind, parseObjects, ROOT, spec, template, VALUE_SETS, type K8sObject } from './helm.js';

const tilt = readFileSync(`${ROOT}Tiltfile`, 'utf8');
const natsValues = parse(readFileSync(`${ROOT}deploy/nats-values.yaml`, 'utf8')) as {
  config?: { nats?: { port?: number }; monitor?: { enabled?: boolean; port?: number } };
  service?: { ports?: Record<string, { enabled?: boolean }> };
};
const NAMESPACE = /^NAMESPACE = '([^']+)'/m.exec(tilt)?.[1];

/**
 * Ports the nats/nats chart's Service `nats` publishes with deploy/nats-values.yaml (chart defaults:
 * nats 4222, monitor 8222 off). Its headless Service `nats-headless` lists every enabled protocol of
 * the server config (monitor included when config.monitor is on) and gives each server the DNS name
 * <pod>.nats-headless.<ns>.svc.<domain>, which KEDA dials on a cluster.
 */
function natsServicePorts(): Set<number> {
  const ports = new Set<number>();
  const svc = natsValues.service?.ports ?? {};
  if (svc.nats?.enabled ?? true) ports.add(natsValues.config?.nats?.port ?? 4222);
  if ((svc.monitor?.enabled ?? false) && (natsValues.config?.monitor?.enabled ?? true)) ports.add(natsValues.config?.monitor?.port ?? 8222);
  return ports;
}

let objects: K8sObject[];
beforeAll(async () => {
  // The Tilt values, rendered into the Tiltfile's namespace, with the KEDA scaler on.
  const r = await template(VALUE_SETS.tilt!, ['services.worker.keda.enabled=true'], ['--namespace', NAMESPACE ?? 'missing']);
  if (r.code !== 0) throw new Error(r.stderr);
  objects = parseObjects(r.stdout);
});

describe('the Tilt dev loop', () => {
  it('never installs dependencies in a pod: a lockfile change rebuilds the image', () => {
    expect(tilt).not.toMatch(/run\(\s*'npm (ci|install|i)\b/);
    expect(tilt).toMatch(/fall_back_on\(\[[^\]]*'package-lock\.json'/);
    expect(tilt).toMatch(/fall_back_on\(\[[^\]]*'package\.json'/);
  });

  it('pins every infra chart and names the namespace explicitly', () => {
    const releases = [...tilt.matchAll(/helm_resource\(\s*'([^']+)',\s*'([^']+)',([\s\S]*?)\n\)/g)];
    expect(releases.map((m) => m[2])).toEqual(['ingress-nginx/ingress-nginx', 'nats/nats', 'cnpg/cloudnative-pg']);
    for (const [, name, , body] of releases) {
      const constant = /'--version=' \+ (\w+)/.exec(body!)?.[1];
      expect(constant, `${name} is pinned`).toBeDefined();
      expect(tilt, `${constant} is a fixed version`).toMatch(new RegExp(`^${constant} = '\\d+\\.\\d+\\.\\d+'$`, 'm'));
    }
    expect(NAMESPACE).toBe('partner');
    expect(tilt).toMatch(/helm_resource\(\s*'nats',\s*'nats\/nats',\s*namespace=NAMESPACE/);
    // The NATS release installs into the namespace only once it exists (no race with namespace_create).
    expect(tilt).toMatch(/k8s_resource\(new_name='namespace', objects=\[NAMESPACE \+ ':namespace'\]/);
    const natsRelease = /helm_resource\(\s*'nats',[\s\S]*?\n\)/.exec(tilt)![0];
    expect(/resource_deps=\[([^\]]*)\]/.exec(natsRelease)?.[1]).toContain("'namespace'");
    expect(tilt).toMatch(/k8s_yaml\(helm\([\s\S]*?namespace=NAMESPACE/);
    expect(tilt).toMatch(/namespace_inject\(read_file\('deploy\/postgres\.yaml'\), NAMESPACE\)/);
    expect(tilt).toMatch(/secret_yaml_generic\('partner-auth-kek', namespace=NAMESPACE/);
  });

  it("dials NATS (egress and NATS_URL) and points KEDA at ports the NATS Service publishes, in the loop's namespace", () => {
    const published = natsServicePorts();
    // The app's NATS URL and the NetworkPolicy egress to NATS.
    const env = (spec(byKind(objects, 'Deployment').find((d) => d.metadata.name.endsWith('-worker'))).template.spec.containers[0].env as { name: string; value?: string }[]);
    const natsUrl = new URL(env.find((e) => e.name === 'NATS_URL')!.value!);
    expect(published.has(Number(natsUrl.port)), `NATS_URL port ${natsUrl.port}`).toBe(true);
    const egressPorts = byKind(objects, 'NetworkPolicy').flatMap((p) =>
      ((spec(p).egress ?? []) as { ports?: { port: number }[]; to?: unknown[] }[]).filter((rule) => JSON.stringify(rule.to ?? []).includes('nats')).flatMap((rule) => (rule.ports ?? []).map((x) => x.port)),
    );
    expect(egressPorts.length).toBeGreaterThan(0);
    for (const p of egressPorts) expect(published.has(p), `egress to NATS port ${p}`).toBe(true);
    // KEDA dials from its own namespace: the endpoint is the NATS release's headless Service, fully
    // qualified with ours, on the servers' monitoring port (the port the headless Service lists).
    const scaled = byKind(objects, 'ScaledObject')[0]!;
    const endpoint = spec(scaled).triggers[0].metadata.natsServerMonitoringEndpoint as string;
    const [host, port] = endpoint.split(':');
    const natsRelease = /helm_resource\(\s*'([^']+)',\s*'nats\/nats'/.exec(tilt)?.[1];
    expect(host).toBe(`${natsRelease}-headless.${NAMESPACE}.svc.cluster.local`);
    expect(natsValues.config?.monitor?.enabled ?? true, 'the servers serve monitoring').toBe(true);
    expect(Number(port)).toBe(natsValues.config?.monitor?.port ?? 8222);
  });

  it('checks what it claims: without service.ports.monitor the monitoring port is not published', () => {
    const saved = natsValues.service;
    natsValues.service = { ports: { nats: { enabled: true } } };
    try {
      expect(natsServicePorts().has(8222)).toBe(false);
    } finally {
      natsValues.service = saved;
    }
  });
});
