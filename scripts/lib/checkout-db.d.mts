// Types of checkout-db.mjs for the TypeScript that uses it (the tests).
import type { Client } from 'pg';

export declare function checkoutNames(root: string): { database: string; natsPrefix: string };
export declare function withDatabase(url: string, database: string): string;
export declare function signingKeysOwner(client: Pick<Client, 'query'>, kekList: string | undefined): Promise<'empty' | 'ours' | 'foreign'>;
export declare function foreignDatabasePlan(a: {
  dbName: string;
  explicit: string[];
  chosen: { DATABASE_URL: string; NATS_PREFIX: string };
}): { fail: string; switchTo?: undefined; note?: undefined } | { fail?: undefined; switchTo: { DATABASE_URL: string; NATS_PREFIX: string }; note: string };
