// .local/dev.env: the local settings `npm start` writes on its first run (the key-encryption key) and
// every local tool reads (npm start, the admin CLI). One `NAME=value` per line; # comments.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DEV_ENV_FILE = fileURLToPath(new URL('../../.local/dev.env', import.meta.url));

/** The file's settings ({} when there is no file). */
export function readDevEnv(file = DEV_ENV_FILE) {
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
      .filter(Boolean)
      .map((m) => [m[1], m[2]]),
  );
}
