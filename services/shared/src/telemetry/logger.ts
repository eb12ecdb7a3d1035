// Structured JSON logs (pino). Secrets never reach a log line: known secret-bearing keys are
// redacted wherever they appear, and callers never log raw headers or bodies.
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

const REDACT_KEYS = [
  'authorization',
  'Authorization',
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'token',
  'accessToken',
  'access_token',
  'privateJwk',
  'private_jwk',
  'cookie',
];

const REDACT_PATHS = [...REDACT_KEYS, ...REDACT_KEYS.map((k) => `*.${k}`), 'req.headers.authorization'];

export function createLogger(
  service: string,
  level = 'info',
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level,
      base: { service },
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
