// Deprecated operations: the API answers them with a `Deprecation` header (RFC 9745), a `Sunset`
// (RFC 8594) and a docs link; the client tells its caller once per operation.

/** An operation the API answered with a `Deprecation` header (RFC 9745), with its `Sunset` (RFC 8594) and docs link. */
export interface DeprecationNotice {
  /** `METHOD /v1/path`, ids shown as `{id}`. */
  operation: string;
  /** When it was deprecated, when the header gave a date. */
  deprecatedAt: Date | undefined;
  /** When it stops answering, when announced. */
  sunset: Date | undefined;
  /** Where to read about the replacement (`Link: <…>; rel="deprecation"`). */
  link: string | undefined;
}

/** Reports each deprecated operation once (per client). */
export class DeprecationNotices {
  private readonly seen = new Set<string>();

  constructor(private readonly report: (notice: DeprecationNotice) => void = (n) => console.warn(deprecationMessage(n))) {}

  /** Tells the caller, once per operation, that the API has deprecated it. */
  notice(method: string, path: string, headers: Headers): void {
    const deprecation = headers.get('deprecation');
    if (deprecation === null) return;
    const operation = `${method} ${operationPath(path)}`;
    if (this.seen.has(operation)) return;
    this.seen.add(operation);
    const at = /^@(-?\d+)$/.exec(deprecation.trim());
    const sunset = headers.get('sunset');
    const link = deprecationLink(headers.get('link') ?? '');
    this.report({
      operation,
      deprecatedAt: at ? new Date(Number(at[1]) * 1000) : undefined,
      sunset: sunset && !Number.isNaN(Date.parse(sunset)) ? new Date(sunset) : undefined,
      link,
    });
  }
}

/** The operation a path belongs to: ids (UUIDs, job ids) shown as `{id}`. */
function operationPath(path: string): string {
  return path
    .split('/')
    .map((s) => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s) || /^job_/.test(s) ? '{id}' : s))
    .join('/');
}

/** The one-line warning for a deprecated operation. */
export function deprecationMessage(n: DeprecationNotice): string {
  const sunset = n.sunset ? `; it stops working on ${n.sunset.toISOString().slice(0, 10)}` : '';
  const link = n.link ? `; see ${n.link}` : '';
  return `warning: ${n.operation} is deprecated${sunset}${link}`;
}

/**
 * The target of the Link header's rel="deprecation" link (RFC 8594): each link read on its own,
 * with anchored patterns, so a long header costs time linear in its length.
 */
function deprecationLink(header: string): string | undefined {
  // Each link is `<target>` and the parameters up to the next `<`: a target may hold commas (RFC 8288),
  // so links are not split on them.
  for (const m of header.matchAll(/<([^<>]*)>([^<]*)/g)) {
    if (m[2]!.split(/[;,]/).some((p) => /^\s*rel\s*=\s*"?deprecation"?\s*$/i.test(p))) return m[1];
  }
  return undefined;
}
