// Docs that keep up with the code (issue 35): the permission lists of README.md and docs/partners.md are
// the auth service's (services/shared/src/domain/permissions.ts, whatever it lists), and the banner the
// README shows is what `npm start` prints (scripts/lib/banner.mjs) for the local defaults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '@partner/shared/domain/permissions';
import { banner } from '../scripts/lib/banner.mjs';
import { ROOT } from './support/stack.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** The `a/b` permissions named in the text (backquoted), in order. */
const permissionsIn = (text: string) => [...text.matchAll(/`([a-z_]+\/(?:read|write))`/g)].map((m) => m[1]);

describe('the documented permissions are the service\'s', () => {
  it('README.md, "Admin CLI": the Permissions line', () => {
    const line = /^Permissions: (.*)$/m.exec(read('README.md'));
    expect(line, 'README.md has a "Permissions:" line').not.toBeNull();
    expect(permissionsIn(line![1]!)).toEqual([...PERMISSIONS]);
  });

  it('docs/partners.md: "Each client is provisioned with permissions (…)"', () => {
    const sentence = /provisioned with permissions \(([^)]*)\)/.exec(read('docs/partners.md'));
    expect(sentence, 'docs/partners.md names the permissions').not.toBeNull();
    expect(permissionsIn(sentence![1]!)).toEqual([...PERMISSIONS]);
  });
});

describe('the README shows the banner npm start prints', () => {
  it('is banner() with the local defaults and placeholder credentials', () => {
    const readme = read('README.md');
    const m = /`npm start` prints \([^)]*\):\n\n```\n([\s\S]*?)\n```/.exec(readme);
    expect(m, 'README.md has the banner block').not.toBeNull();
    const shown = banner({
      env: { ENVIRONMENT: 'uat', BASE_URL: 'http://127.0.0.1:8080', AUTH_ISSUER: 'http://127.0.0.1:8081', WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true' },
      scope: '127.0.0.1:8080/access',
      demo: { clientId: 'cli_…', clientSecret: 'sk_…', tenant: 'demo', partnerId: 'demo-partner', principalId: 'demo-broker', productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b' },
    });
    expect(m![1]).toBe(shown);
    // It names every process's ops port and the first request to try.
    for (const name of ['gateway', 'auth', 'events', 'dispatcher']) expect(shown).toMatch(new RegExp(`${name} :\\d+`));
    expect(shown).toContain('Try it:');
  });

  it('npm start prints it from the same function', () => {
    expect(read('scripts/start.mjs')).toMatch(/banner\(\{ env, scope: SCOPE, demo \}\)/);
  });
});
