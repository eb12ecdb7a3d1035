// Deprecation of routes (README.md, "Versioning and deprecation"): an operation scheduled for removal
// answers every request with `Deprecation` (RFC 9745, a structured-field date), `Sunset` (RFC 8594,
// an HTTP-date) and `Link: <docs>; rel="deprecation"`. Which operations, from configuration
// (DEPRECATIONS, a JSON array), so deprecating needs no code change.
import type { GatewayMiddleware } from '../context.js';

export interface DeprecationRule {
  /** `METHOD /v1/path`, path parameters as `:name` (e.g. `GET /v1/jobs/:id`). */
  operation: string;
  /** When the operation was (or will be) deprecated, ISO 8601. */
  deprecation: string;
  /** When it stops answering, ISO 8601; optional. */
  sunset?: string;
  /** Where partners read about the replacement. */
  link: string;
}

interface CompiledRule {
  method: string;
  path: RegExp;
  headers: Record<string, string>;
}

const OPERATION = /^(GET|POST|PUT|PATCH|DELETE) (\/v1(?:\/(?::[A-Za-z]\w*|[A-Za-z0-9._~-]+))+)$/;

/** The rules in DEPRECATIONS, or the problems with them (each naming the entry). */
export function parseDeprecations(raw: string): { rules: DeprecationRule[]; problems: string[] } {
  const problems: string[] = [];
  let list: unknown;
  try {
    list = JSON.parse(raw || '[]');
  } catch {
    return { rules: [], problems: ['must be a JSON array'] };
  }
  if (!Array.isArray(list)) return { rules: [], problems: ['must be a JSON array'] };
  const rules: DeprecationRule[] = [];
  list.forEach((entry: Partial<DeprecationRule>, i) => {
    const where = `entry ${i}`;
    if (typeof entry !== 'object' || entry === null) return problems.push(`${where} must be an object`);
    if (typeof entry.operation !== 'string' || !OPERATION.test(entry.operation)) problems.push(`${where}: operation must be "METHOD /v1/path" (path parameters as :name)`);
    if (typeof entry.deprecation !== 'string' || Number.isNaN(Date.parse(entry.deprecation))) problems.push(`${where}: deprecation must be an ISO 8601 date`);
    if (entry.sunset !== undefined && (typeof entry.sunset !== 'string' || Number.isNaN(Date.parse(entry.sunset)))) problems.push(`${where}: sunset must be an ISO 8601 date`);
    if (typeof entry.link !== 'string' || !/^https?:\/\//.test(entry.link)) problems.push(`${where}: link must be an http(s) URL`);
    else rules.push(entry as DeprecationRule);
  });
  return problems.length ? { rules: [], problems } : { rules, problems };
}

function compile(rule: DeprecationRule): CompiledRule {
  const [method, path] = rule.operation.split(' ') as [string, string];
  const pattern = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.]/g, '\\.')))
    .join('/');
  const headers: Record<string, string> = {
    Deprecation: `@${Math.floor(Date.parse(rule.deprecation) / 1000)}`,
    Link: `<${rule.link}>; rel="deprecation"; type="text/html"`,
  };
  if (rule.sunset) headers.Sunset = new Date(rule.sunset).toUTCString();
  return { method, path: new RegExp(`^${pattern}/?$`), headers };
}

/** Middleware setting the headers on every response of a deprecated operation, errors included. */
export function deprecationHeaders(rules: DeprecationRule[]): GatewayMiddleware {
  const compiled = rules.map(compile);
  return async (ctx, next) => {
    const rule = compiled.find((r) => r.method === ctx.method && r.path.test(ctx.path));
    if (rule) {
      for (const [name, value] of Object.entries(rule.headers)) {
        if (name === 'Link') ctx.append('Link', value);
        else ctx.set(name, value);
      }
    }
    await next();
  };
}
