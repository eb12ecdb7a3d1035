// .local/dev.env: the local settings `npm start` writes on its first run (the key-encryption key; the
// database and NATS prefix of this checkout when they are not the defaults) and every local tool reads
// (npm start, the admin CLI). One `NAME=value` per line; # comments.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DEV_ENV_FILE = fileURLToPath(new URL('../../.local/dev.env', import.meta.url));

/** Where this checkout's services and tools meet: saved by `npm start` when given, read by the admin CLI. */
export const SHARED_SETTINGS = ['DATABASE_URL', 'NATS_URL', 'NATS_PREFIX'];

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

/**
 * Sets these settings in the file (replacing a line of the same name, else appending), keeping every
 * other line and comment as it was; returns the names whose value changed.
 */
export function updateDevEnv(settings, file = DEV_ENV_FILE) {
  const before = readDevEnv(file);
  const changed = Object.keys(settings).filter((name) => before[name] !== settings[name]);
  if (changed.length === 0) return [];
  const lines = existsSync(file) ? readFileSync(file, 'utf8').replace(/\n+$/, '').split('\n') : [];
  for (const name of changed) {
    const at = lines.findIndex((line) => line.trim().startsWith(`${name}=`));
    if (at >= 0) lines[at] = `${name}=${settings[name]}`;
    else lines.push(`${name}=${settings[name]}`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return changed;
}
