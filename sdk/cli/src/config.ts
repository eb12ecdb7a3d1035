// Where the CLI keeps its settings: $XDG_CONFIG_HOME/partner/config.json (or
// ~/.config/partner/config.json) for the default profile, profiles/<name>.json beside it for a named
// one (--profile uat, or PARTNER_PROFILE), in a directory of mode 0700, each file of mode 0600 (it
// holds the client secret), written atomically. Environment variables PARTNER_BASE_URL,
// PARTNER_AUTH_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET and PARTNER_SCOPE override what the
// file says.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Settings {
  baseUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

export const SETTING_ENV: Record<keyof Settings, string> = {
  baseUrl: 'PARTNER_BASE_URL',
  authUrl: 'PARTNER_AUTH_URL',
  clientId: 'PARTNER_CLIENT_ID',
  clientSecret: 'PARTNER_CLIENT_SECRET',
  scope: 'PARTNER_SCOPE',
};

/** A problem with the settings: exit code 4. */
export class ConfigError extends Error {}

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** The profile a command uses: --profile, else PARTNER_PROFILE, else the default one (undefined). */
export function profileOf(option: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const name = option ?? (env.PARTNER_PROFILE || undefined);
  if (name === undefined || name === 'default') return undefined;
  if (!PROFILE_NAME.test(name)) throw new ConfigError(`profile ${JSON.stringify(name)}: 1-32 lowercase letters, digits, _ and -`);
  return name;
}

export function configFile(env: NodeJS.ProcessEnv, profile?: string): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return profile === undefined ? join(base, 'partner', 'config.json') : join(base, 'partner', 'profiles', `${profile}.json`);
}

/** What the file holds (nothing when there is no file). Warns when others may read it. */
export function readStored(file: string, warn: (message: string) => void): Partial<Settings> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    warn(`${file} can be read by other users; run: chmod 600 ${file}`);
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const out: Partial<Settings> = {};
    for (const key of Object.keys(SETTING_ENV) as (keyof Settings)[]) {
      if (typeof parsed[key] === 'string') out[key] = parsed[key];
    }
    return out;
  } catch {
    throw new ConfigError(`${file} is not valid JSON; run partner login again`);
  }
}

/** Writes the settings readable by the owner only, replacing the file atomically. */
export function writeStored(file: string, settings: Settings): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // profiles/ sits inside partner/: both private.
  if (dirname(file).endsWith('profiles')) chmodSync(dirname(dirname(file)), 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export function removeStored(file: string): boolean {
  try {
    rmSync(file);
    return true;
  } catch {
    return false;
  }
}

/** What a command cannot do without; the scope follows from the base URL unless given. */
const REQUIRED: (keyof Settings)[] = ['baseUrl', 'authUrl', 'clientId', 'clientSecret'];

/**
 * The effective settings: the environment over the file. Throws ConfigError: "not logged in" when
 * nothing is configured, else naming only the required settings that are missing.
 */
export function resolveSettings(env: NodeJS.ProcessEnv, stored: Partial<Settings>, profile?: string): Settings {
  const merged: Partial<Settings> = { ...stored };
  for (const [key, name] of Object.entries(SETTING_ENV) as [keyof Settings, string][]) {
    if (env[name]) merged[key] = env[name];
  }
  if (!merged.scope && merged.baseUrl) merged.scope = defaultScope(merged.baseUrl);
  const login = `partner login${profile ? ` --profile ${profile}` : ''}`;
  const missing = REQUIRED.filter((k) => !merged[k]);
  if (missing.length === REQUIRED.length) throw new ConfigError(`not logged in${profile ? ` (profile ${profile})` : ''}: run ${login}`);
  if (missing.length > 0) {
    throw new ConfigError(`not configured: ${missing.map((k) => SETTING_ENV[k]).join(', ')} missing; run ${login}, or set ${missing.length === 1 ? 'it' : 'them'} in the environment`);
  }
  return merged as Settings;
}

/** The access scope of an environment: `<api_host>/access`. */
export function defaultScope(baseUrl: string): string {
  try {
    return `${new URL(baseUrl).host}/access`;
  } catch {
    return '';
  }
}
