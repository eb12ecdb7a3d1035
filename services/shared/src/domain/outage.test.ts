import { describe, expect, it } from 'vitest';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, fromGrpcError, toGrpcError } from './errors.js';
import { isConnectionError, isDependencyOutage, isNatsOutage } from './outage.js';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });
const natsError = (code: string) => Object.assign(new Error(`nats ${code}`), { name: 'NatsError', code });

describe('dependency outages', () => {
  it('recognises PostgreSQL unreachable: sockets, connection classes, shutdowns, pool timeouts, a standby', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', '08006', '08001', '08P01', '57P01', '57P02', '57P03', '53300', '25006']) {
      expect(isConnectionError(pgError(code)), code).toBe(true);
    }
    for (const message of ['Connection terminated unexpectedly', 'timeout exceeded when trying to connect', 'Connection terminated due to connection timeout', 'Client has encountered a connection error and is not queryable']) {
      expect(isConnectionError(new Error(message)), message).toBe(true);
    }
    const aggregate = Object.assign(new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')]), { code: undefined });
    expect(isConnectionError(aggregate)).toBe(true);
  });

  it('leaves bad requests and bugs alone', () => {
    for (const code of ['23505', '22P02', '42P01', '57014', '40001']) expect(isConnectionError(pgError(code)), code).toBe(false);
    expect(isDependencyOutage(new TypeError('x is undefined'))).toBe(false);
    expect(isDependencyOutage(undefined)).toBe(false);
    expect(isDependencyOutage(new DomainError('not_found', 'job not found'))).toBe(false);
  });

  it('recognises NATS down or JetStream not answering', () => {
    for (const code of ['CONNECTION_CLOSED', 'DISCONNECT', 'TIMEOUT', '503']) expect(isNatsOutage(natsError(code)), code).toBe(true);
    expect(isNatsOutage(natsError('BAD_JSON'))).toBe(false);
    expect(isNatsOutage(pgError('TIMEOUT'))).toBe(false);
  });

  it('answers a raw outage UNAVAILABLE with retry-after in the trailers, which the caller reads back', () => {
    for (const err of [pgError('57P01'), natsError('CONNECTION_CLOSED'), new DomainError('unavailable', 'busy')]) {
      const status = toGrpcError(err);
      expect(status.code).toBe(GrpcStatus.UNAVAILABLE);
      expect(status.metadata!.get('retry-after')).toEqual(['1']);
      const back = fromGrpcError(status);
      expect({ code: back.code, retryable: back.retryable, retryAfterS: back.retryAfterS }).toEqual({ code: 'unavailable', retryable: true, retryAfterS: 1 });
    }
    // Not an outage: no retry hint.
    expect(toGrpcError(new DomainError('not_found', 'job not found')).metadata!.get('retry-after')).toEqual([]);
    expect(toGrpcError(new Error('bug')).code).toBe(GrpcStatus.INTERNAL);
  });
});
