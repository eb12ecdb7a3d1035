// The auth service's metrics: access tokens issued, and token requests refused by OAuth error code.
import { Counter, type Registry } from 'prom-client';

export interface AuthMetrics {
  issued(): void;
  refused(reason: string): void;
}

export function authMetrics(registry: Registry): AuthMetrics {
  const issued = new Counter({ name: 'partner_auth_tokens_issued_total', help: 'Access tokens issued.', registers: [registry] });
  const refused = new Counter({
    name: 'partner_auth_tokens_refused_total',
    help: 'Token requests refused, by OAuth error code.',
    labelNames: ['reason'],
    registers: [registry],
  });
  return { issued: () => issued.inc(), refused: (reason) => refused.inc({ reason }) };
}
