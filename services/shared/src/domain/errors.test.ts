import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { DomainError, ERROR_CODES, fromGrpcError, httpStatusForCode, sqlStateError, toGrpcError } from './errors.js';

describe('error table', () => {
  it('maps the documented codes to their HTTP statuses and retryability', () => {
    expect(ERROR_CODES.unauthenticated.http).toBe(401);
    expect(ERROR_CODES.idempotency_key_reused.http).toBe(422);
    expect(ERROR_CODES.rate_limited).toMatchObject({ http: 429, retryable: true });
    expect(ERROR_CODES.unavailable).toMatchObject({ http: 503, retryable: true });
    expect(new DomainError('internal', 'x').retryable).toBe(true);
  });

  it('maps codes outside the table by retryability (job errors may carry any code)', () => {
    expect(httpStatusForCode('declined_by_underwriter', false)).toBe(422);
    expect(httpStatusForCode('upstream_timeout', true)).toBe(503);
  });

  it('carries a domain error across gRPC intact', () => {
    const original = new DomainError('validation_error', 'bad field', { details: [{ field: 'a', issue: 'is required' }] });
    const wire = toGrpcError(original);
    expect(wire.code).toBe(status.INVALID_ARGUMENT);
    const back = fromGrpcError({ ...wire, message: 'ignored' });
    expect(back).toMatchObject({ code: 'validation_error', message: 'bad field', retryable: false, details: [{ field: 'a', issue: 'is required' }] });
  });

  it('never leaks an unexpected error message over gRPC', () => {
    const wire = toGrpcError(new Error('password=hunter2 at db.ts:12'));
    expect(wire.code).toBe(status.INTERNAL);
    expect(wire.details).toBe('internal error');
  });

  it('maps failures without our error metadata (transport failures) to retryable unavailable', () => {
    expect(fromGrpcError({ code: status.UNAVAILABLE, details: 'No connection established' })).toMatchObject({ code: 'unavailable', retryable: true });
    expect(fromGrpcError({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' }).code).toBe('unavailable');
    expect(fromGrpcError({ code: status.INTERNAL, details: 'Received RST_STREAM with code 2' }).code).toBe('unavailable');
    expect(fromGrpcError({ code: status.UNIMPLEMENTED, details: 'no such method' }).code).toBe('internal');
  });
});

describe('database errors by SQLSTATE class', () => {
  const pgError = (code: string) => Object.assign(new Error('pg'), { code });

  it('a value the database cannot store is the request’s fault: validation_error, not retryable, over gRPC too', () => {
    for (const code of ['22008', '22021', '22P05', '22001', '23514']) {
      expect(sqlStateError(pgError(code)), code).toMatchObject({ code: 'validation_error', retryable: false });
    }
    const status = toGrpcError(pgError('22008'));
    const back = fromGrpcError(status);
    expect(back).toMatchObject({ code: 'validation_error', retryable: false });
  });

  it('transient classes are retryable; races and everything else are left alone', () => {
    for (const code of ['40001', '40P01', '53300', '57014']) expect(sqlStateError(pgError(code)), code).toMatchObject({ code: 'unavailable', retryable: true });
    for (const code of ['23505', '42P01', 'XX000']) expect(sqlStateError(pgError(code)), code).toBeUndefined();
    expect(sqlStateError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(sqlStateError(new TypeError('x'))).toBeUndefined();
    expect(toGrpcError(pgError('42P01')).metadata?.get('x-error-code')).toEqual(['internal']);
  });
});
