// Docs that run as written: the shell blocks of README.md and docs/partners.md (every ```sh block
// not marked `<!-- docs-test: skip (why) -->`, see test/support/doc-blocks.ts) run in order, one bash
// per document under `set -euo pipefail`, against a test stack seeded as `npm start` seeds the demo
// (a client, the demo-broker principal, the demo product with its requirements and rating plan from
// scripts/demo/product.mjs, the demo policies, `.local/demo.json`),
// with the documents' addresses replaced by the stack's.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type ClientCreds } from './support/stack.js';
import { runProcess, type ProcessRun } from './support/run.js';
import { useStack } from './support/use-stack.js';
import { fileBlocks, shellBlocks } from './support/doc-blocks.js';
import { DEMO_PRODUCT as PRODUCT, DEMO_RATING_PLAN, DEMO_REQUIREMENTS } from '../scripts/demo/product.mjs';

const DEMO_PRODUCT = PRODUCT.id;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let creds: ClientCreds;

const stack = useStack(async (stack) => {
  await stack.startAll();
  const dir = mkdtempSync(join(tmpdir(), 'docs-policies-'));
  await stack.admin('product', 'add', '--id', DEMO_PRODUCT, '--name', PRODUCT.name);
  writeFileSync(join(dir, 'requirements.json'), JSON.stringify(DEMO_REQUIREMENTS));
  await stack.admin('product', 'requirements', 'set', '--id', DEMO_PRODUCT, join(dir, 'requirements.json'));
  writeFileSync(join(dir, 'rating-plan.json'), JSON.stringify(DEMO_RATING_PLAN));
  await stack.admin('product', 'rating', 'set', '--id', DEMO_PRODUCT, join(dir, 'rating-plan.json'));
  writeFileSync(join(dir, 'policies.jsonl'), execFileSync(process.execPath, [join(ROOT, 'scripts/demo/policies.mjs')]));
  policiesFile = join(dir, 'policies.jsonl');
  await newPartner();
});
let policiesFile = '';

/**
 * A partner of its own for each document: README's walkthrough and partners.md submit the same insured,
 * so under one partner the second submission is a `duplicate`, which cannot be quoted or bound.
 */
async function newPartner(): Promise<void> {
  creds = await stack.createClient();
  await stack.admin('principal', 'add', '--tenant', creds.tenant, '--partner', creds.partnerId, '--principal', 'demo-broker');
  await stack.admin('policy', 'import', '--tenant', creds.tenant, '--partner', creds.partnerId, policiesFile);
}

/** The document's runnable blocks as one script, its addresses the stack's, reporting the variables it set. */
function script(doc: string, report: string[]): { text: string; lines: number[] } {
  const blocks = shellBlocks(join(ROOT, doc)).filter((b) => !b.skipped);
  const text = [
    'set -euo pipefail',
    ...blocks.map((b) => `# --- ${doc}:${b.line}\n${b.code}`),
    // A block's last output may not end its line: each report starts on a line of its own.
    ...report.map((v) => `printf '\\n::%s=%s\\n' ${v} "\${${v}:-}"`),
  ]
    .join('\n')
    .replaceAll('127.0.0.1:8080/access', stack.scope)
    .replaceAll('api.uat.example.com/access', stack.scope)
    .replaceAll('http://127.0.0.1:8080', stack.gatewayUrl)
    .replaceAll('http://127.0.0.1:8081', stack.authUrl)
    .replaceAll('https://api.uat.example.com', stack.gatewayUrl)
    .replaceAll('https://auth.uat.example.com', stack.authUrl);
  return { text, lines: blocks.map((b) => b.line) };
}

/**
 * Runs the script in a fresh directory holding what `npm start` and a partner would have there: the
 * repository's node_modules and sdk/ (as in a checkout), the `partner` CLI on PATH (as installed),
 * its settings in PARTNER_*, and the files the document asks for (`<!-- docs-test: file NAME -->`).
 */
async function runScript(text: string, doc?: string): Promise<ProcessRun & { vars: Record<string, string> }> {
  const cwd = mkdtempSync(join(tmpdir(), 'docs-run-'));
  mkdirSync(join(cwd, '.local'));
  symlinkSync(join(ROOT, 'node_modules'), join(cwd, 'node_modules'));
  symlinkSync(join(ROOT, 'sdk'), join(cwd, 'sdk'));
  mkdirSync(join(cwd, 'bin'));
  writeFileSync(join(cwd, 'bin/partner'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'sdk/cli/dist/main.js')}" "$@"\n`);
  chmodSync(join(cwd, 'bin/partner'), 0o755);
  for (const f of doc ? fileBlocks(join(ROOT, doc)) : []) writeFileSync(join(cwd, f.name), f.code);
  writeFileSync(join(cwd, '.local/demo.json'), JSON.stringify({ clientId: creds.clientId, clientSecret: creds.clientSecret, productId: DEMO_PRODUCT }));
  writeFileSync(join(cwd, 'loss-runs.pdf'), '%PDF-1.4\n% a partner\'s loss run\n%%EOF\n');
  const run = await runProcess('bash', ['-c', text], {
    cwd,
    env: {
      PATH: `${join(cwd, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: cwd,
      // NODE_PATH: the packages a partner's docs step installs (npm install ajv) are the repository's here.
      NODE_PATH: join(ROOT, 'node_modules'),
      CLIENT_ID: creds.clientId,
      CLIENT_SECRET: creds.clientSecret,
      PRODUCT_ID: DEMO_PRODUCT,
      PARTNER_BASE_URL: stack.gatewayUrl,
      PARTNER_AUTH_URL: stack.authUrl,
      PARTNER_CLIENT_ID: creds.clientId,
      PARTNER_CLIENT_SECRET: creds.clientSecret,
      PARTNER_SCOPE: stack.scope,
    },
  });
  const vars = Object.fromEntries([...run.stdout.matchAll(/^::(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  return { ...run, vars };
}

describe('the documents run as written', () => {
  it('README.md: the curl walkthrough (requirements, validate, create, upload until nothing is due, clearance, receipts), policies, attachments and the download check', async () => {
    const { text, lines } = script('README.md', ['SUBMISSION_ID', 'ATTACHMENT_ID', 'JOB_ID', 'NEXT']);
    expect(lines.length).toBeGreaterThanOrEqual(8);
    const r = await runScript(text);
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(r.stdout).toMatch(/^Idempotent-Replayed: true/im);
    expect(r.stdout).toMatch(/"status":"succeeded"/);
    expect(r.stdout).toContain('loss-runs-2024.pdf: OK');
    expect(r.vars.SUBMISSION_ID).toMatch(UUID);
    expect(r.vars.ATTACHMENT_ID).toMatch(UUID);
    expect(r.vars.JOB_ID).toMatch(/^job_/);
    expect(r.vars.NEXT).not.toMatch(/^(null|undefined|)$/);
    // Products: the requirements, the 304 on their ETag, and validate's verdicts.
    expect(r.stdout).toMatch(/[^0-9]304$/m);
    // Step 3: the demo product's attachment rules, as seeded (in the stored document's key order).
    const rules = /\[\{"(?:documentType|min|max|mediaTypes|maxBytes)"[^\n]*\}\]$/m.exec(r.stdout);
    expect(rules, 'the attachment rules of step 3').not.toBeNull();
    expect(JSON.parse(rules![0])).toEqual(DEMO_REQUIREMENTS.attachments);
    expect(r.stdout).toContain('{"valid":true,"errors":[],"requirementsVersion":2}');
    expect(r.stdout).toContain('"valid":false');
    // Step 7: the loss run the demo product requires is due, then uploaded, then due no more.
    const due = r.stdout.indexOf('{"version":2,"currentlyDue":["attachments.loss_run"]}');
    expect(due).toBeGreaterThanOrEqual(0);
    expect(r.stdout.indexOf('{"version":2,"currentlyDue":[]}', due)).toBeGreaterThan(due);
    // The quote of the Acme submission: open, at the demo plan's premium, with an offer.
    const quoted = /\{"quotes":\[.*?\],"submissionId":"[^"]+"\}/.exec(r.stdout);
    expect(quoted, 'the quote request of the walkthrough').not.toBeNull();
    expect(JSON.parse(quoted![0]).quotes[0]).toMatchObject({ status: 'open', option: { limit: '1000000', retention: '10000' }, premium: { amount: '3125.00', currency: 'USD' }, offer: expect.stringMatching(/^eyJ/) });
    // Quote and bind: the walkthrough ends with a policy and its declarations PDF.
    expect(r.stdout).toMatch(/"policyNumber":"P-2027-\d{8}"/);
    expect(r.stdout).toMatch(/declarations declarations-P-2027-\d{8}\.pdf [0-9a-f]{64}$/m);
    // Step 9: the receipts verified offline by the CLI.
    expect(r.stdout).toMatch(/"valid": true/);
  });

  it('docs/partners.md: the five curl steps, and the receipt verified with jose and with the CLI', async () => {
    await newPartner();
    const { text, lines } = script('docs/partners.md', ['SUBMISSION_ID']);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(fileBlocks(join(ROOT, 'docs/partners.md')).map((f) => f.name)).toContain('verify-receipt.mjs');
    const r = await runScript(text, 'docs/partners.md');
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(r.vars.SUBMISSION_ID).toMatch(UUID);
    expect(r.stdout).toMatch(/"documentType":"loss_run"/);
    expect(r.stdout).toMatch(/"items":\[/);
    // Offline with Ajv on the published schema, then the server's verdict.
    expect(r.stdout).toMatch(/[^"]valid$/m);
    expect(r.stdout).toContain('"valid":true');
    // "Proving what you sent": jose prints the signed claims, the CLI passes the chain.
    expect(r.stdout).toMatch(/kind: 'submission\.received'/);
    expect(r.stdout).toMatch(/"valid": true/);
    // The later stretch, checked from its declared start.
    expect(r.stdout).toMatch(/"start": "declared",\s+"fromSeq": 2/);
    // "Getting a quote": two open quotes of the demo plan, the open list, the offer verified by the SDK and the CLI.
    expect(r.stdout).toContain('"status":"open","premium":{"amount":"3125.00","currency":"USD"}');
    expect(r.stdout).toMatch(/^\[\{"limit":"\d+","retention":"\d+"\},\{"limit":"\d+","retention":"\d+"\}\]$/m);
    expect(r.stdout).toMatch(/ 3125\.00 USD \S+ [0-9a-f]{64}$/m);
    expect(r.stdout).toMatch(/"matchesQuote": true/);
    // "From quote to policy": the bound quote's policy, listed, its PDF's sha256 checked, the deal's receipts.
    expect(r.stdout).toContain('{"status":"pending","premium":{"amount":"3125.00","currency":"USD"},"option":{"limit":"1000000","retention":"10000"}}');
    expect(r.stdout).toMatch(/^\["[0-9a-f-]{36}"\]$/m);
    expect(r.stdout).toContain('declarations.pdf: OK');
    expect(r.stdout).toMatch(/"bind\.received","policy\.issued"\]$/m);
    expect(r.stdout).toMatch(/"file": ".*policy-documents\/declarations-P-\d{4}-\d{8}\.pdf"/);
    // "Finding a request": the submission and its replay by key, the replay first; the stored body redacted.
    expect(r.stdout).toMatch(/"status":200,"idempotentReplayed":true,"jobId":"job_[0-9a-f]{32}"}\n\{"requestId":"acme-[^"]+-1","status":200,"idempotentReplayed":false/);
    expect(r.stdout).toContain('"taxId": "****6789"');
    expect(r.stdout).not.toContain('3456789"');
    // "Testing time": a quote that expires and a policy that takes effect as the test clock moves.
    expect(r.stdout).toContain('{"status":"open","validUntil":"2030-01-31T00:00:00.000Z"}');
    expect(r.stdout).toContain('{"frozenTime":"2030-02-01T00:00:00.000Z","quotesExpired":1}');
    expect(r.stdout).toContain('{"status":"expired","validUntil":"2030-01-31T00:00:00.000Z"}');
    expect(r.stdout).toContain('{"status":"pending","effectiveDate":"2030-02-15"}');
    expect(r.stdout).toContain('{"frozenTime":"2030-02-16T00:00:00.000Z","policiesActivated":1}');
    expect(r.stdout).toContain('{"status":"active","effectiveDate":"2030-02-15"}');
  });
});
