import { describe, expect, it } from 'vitest';
import { querySpanName } from './span-name.js';

describe('querySpanName', () => {
  it('names a statement by its operation and main table', () => {
    expect(querySpanName('INSERT INTO jobs (job_id, kind) VALUES ($1, $2) RETURNING *').name).toBe('INSERT jobs');
    expect(querySpanName('  update outbox SET tries = tries + 1 WHERE id = $1').name).toBe('UPDATE outbox');
    expect(querySpanName('DELETE FROM job.outbox WHERE job_id = ANY($1)').name).toBe('DELETE job.outbox');
    expect(querySpanName('SELECT p.id, p.name FROM products p WHERE p.id = $1').name).toBe('SELECT products');
    expect(querySpanName('SELECT 1').name).toBe('SELECT');
    expect(querySpanName('BEGIN').name).toBe('BEGIN');
  });

  it('names a CTE by its main statement and ignores keywords in comments and literals', () => {
    expect(querySpanName('WITH ins AS (SELECT $1::text AS id) INSERT INTO jobs SELECT * FROM ins').name).toBe('INSERT jobs');
    expect(querySpanName("-- FROM secrets\nSELECT 'FROM x' AS a FROM clients").name).toBe('SELECT clients');
    expect(querySpanName('VACUUM').name).toBe('SQL');
  });
});
