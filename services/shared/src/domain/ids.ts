// Identifiers: UUIDv7 (time-ordered, so B-tree inserts stay local) and job handles `job_<32 hex>`.
import { v7 as uuidv7 } from 'uuid';

export const newUuid = (): string => uuidv7();

export const newJobId = (): string => `job_${uuidv7().replace(/-/g, '')}`;

const JOB_ID = /^job_[0-9a-f]{32}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isJobId = (s: string): boolean => JOB_ID.test(s);
export const isUuid = (s: string): boolean => UUID.test(s);

/** RFC 3339 UTC with milliseconds, as the API prints every timestamp. */
export const iso = (d: Date): string => d.toISOString();

/** A principal id as x-principal-id carries it: 1-128 of letters, digits and `._:@-`, starting with a letter or digit. */
export const isPrincipalId = (s: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(s);
