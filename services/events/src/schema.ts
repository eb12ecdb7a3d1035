// The events service's schema and its migrations: all that the admin commands, the migrations and the
// other entry points need of the service, without loading the service itself (app.ts).
import { fileURLToPath } from 'node:url';

export const SCHEMA = 'events';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
