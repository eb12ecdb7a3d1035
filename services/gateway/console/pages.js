// The console's pages. Each reads its filters from the URL, calls the /v1 API as the session's
// client, and renders with dom.js. A part whose API this deployment lacks (an absent route) is left
// out; a part the client is not provisioned for says so.
import { api, errorText, listAll } from './api.js';
import { append, facts, filters, h, json, nextLink, table, timeEl } from './dom.js';
import { verifyReceipt } from './receipts.js';

const DAY_MS = 86_400_000;
/** Appends what is there (a part left out is null). */
const add = (el, ...children) => append(el, children);
const since24h = () => new Date(Date.now() - DAY_MS).toISOString();
const link = (href, text) => h('a', { href }, text);
const code = (text) => h('code', {}, text ?? '—');
const section = (title, ...body) => h('section', { 'aria-labelledby': `h-${slug(title)}` }, h('h2', { id: `h-${slug(title)}` }, title), ...body);
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
const problem = (r) => h('p', { class: 'error' }, r.status === 403 ? `This client is not provisioned for this (${errorText(r)}).` : errorText(r));
const paramsOf = (params, names) => Object.fromEntries(names.filter((n) => params.get(n)).map((n) => [n, params.get(n)]));

/** Runs a mutation with Prefer: wait and says what came of it. */
async function mutate(ctx, method, path, body, done) {
  ctx.say('Working…');
  const r = await api(method, path, { body, headers: { prefer: 'wait=10' } });
  if (r.ok) ctx.say(r.status === 202 ? `Accepted as job ${r.body.id}; it has not settled yet.` : 'Done.');
  else ctx.say(`Refused: ${errorText(r)}`, true);
  if (done) await done(r);
  return r;
}

// ---------------------------------------------------------------- Overview
async function overview(ctx) {
  const cards = h('div', { class: 'cards' });
  add(ctx.content, h('p', {}, 'The last 24 hours of this partner\'s account.'), cards);
  const since = since24h();
  const CLASSES = ['2xx', '4xx', '5xx'];
  const [byClass, failed, endpoints, submissions] = await Promise.all([
    // One listing per status class, side by side (the log has no counts): at most 2,000 each.
    Promise.all(CLASSES.map((status) => listAll('/v1/requests', { createdSince: since, status }, 10))),
    api('GET', '/v1/jobs', { query: { status: 'failed', createdSince: since, limit: 10 } }),
    api('GET', '/v1/webhook-endpoints', { query: { limit: 50 } }),
    api('GET', '/v1/submissions', { query: { limit: 30 } }),
  ]);
  const requests = byClass.find((r) => !r.ok) ?? byClass[0];
  if (!requests.absent) {
    const card = h('section', { class: 'card', 'aria-labelledby': 'h-req' }, h('h2', { id: 'h-req' }, 'Requests by status class'));
    if (requests.ok) {
      add(card,
        table('Requests in the last 24 hours', [
          { label: 'Status class', cell: (r) => link(`/console/requests?status=${r.status}&createdSince=${encodeURIComponent(since)}`, r.status) },
          { label: 'Requests', cell: (r) => `${r.count}${r.complete ? '' : '+'}`, num: true },
        ], CLASSES.map((status, i) => ({ status, count: byClass[i].items.length, complete: byClass[i].complete !== false }))),
        byClass.some((r) => r.complete === false) ? h('p', {}, 'A class with + has more than 2,000 requests; its count stops there.') : null,
      );
    } else card.append(problem(requests));
    cards.append(card);
  }
  const jobsCard = h('section', { class: 'card', 'aria-labelledby': 'h-failed' }, h('h2', { id: 'h-failed' }, 'Failed jobs'));
  if (failed.ok) {
    jobsCard.append(table('Failed jobs in the last 24 hours', [
      { label: 'Job', cell: (j) => link(`/console/jobs?id=${j.id}`, j.kind) },
      { label: 'Error', cell: (j) => code(j.error?.code) },
      { label: 'Created', cell: (j) => timeEl(j.createdAt) },
    ], failed.body.items, 'No failed jobs in the last 24 hours.'));
  } else jobsCard.append(problem(failed));
  cards.append(jobsCard);
  if (!endpoints.absent) {
    const card = h('section', { class: 'card', 'aria-labelledby': 'h-failing' }, h('h2', { id: 'h-failing' }, 'Failing webhook endpoints'));
    if (endpoints.ok) {
      const failing = [];
      for (const e of endpoints.body.items) {
        const d = await api('GET', `/v1/webhook-endpoints/${e.endpointId}/deliveries`, { query: { status: 'failed', limit: 1 } });
        if (e.status === 'disabled' || (d.ok && d.body.items.length > 0)) failing.push({ ...e, lastFailure: d.body?.items?.[0] });
      }
      card.append(table('Endpoints that are disabled or have failed deliveries', [
        { label: 'Endpoint', cell: (e) => link(`/console/webhooks?id=${e.endpointId}`, e.url) },
        { label: 'Status', cell: (e) => e.status },
        { label: 'Last failure', cell: (e) => e.lastFailure?.lastError ?? (e.lastFailure ? `HTTP ${e.lastFailure.lastResponseStatus}` : '—') },
      ], failing, 'No failing endpoints.'));
    } else card.append(problem(endpoints));
    cards.append(card);
  }
  if (submissions.ok && submissions.body.items.length > 0) {
    const referred = [];
    let absent = false;
    for (const s of submissions.body.items) {
      const q = await api('GET', `/v1/submissions/${s.submissionId}/quotes`, { query: { status: 'referred' } });
      if (q.absent) {
        absent = true;
        break;
      }
      if (q.ok) referred.push(...q.body.items);
    }
    if (!absent) {
      cards.append(h('section', { class: 'card', 'aria-labelledby': 'h-referrals' }, h('h2', { id: 'h-referrals' }, 'Referrals waiting'),
        table('Quotes referred to an underwriter', [
          { label: 'Quote', cell: (q) => link(`/console/quotes?submissionId=${q.submissionId}`, q.quoteId) },
          { label: 'Due by', cell: (q) => timeEl(q.referral?.dueBy) },
        ], referred, 'No referrals waiting.')));
    }
  }
}

// ---------------------------------------------------------------- Requests
const REQUEST_FILTERS = [
  { name: 'status', label: 'Status', placeholder: '2xx, 4xx, 5xx or 404' },
  { name: 'method', label: 'Method', options: ['GET', 'POST', 'PATCH', 'DELETE'] },
  { name: 'pathPrefix', label: 'Path prefix', placeholder: '/v1/submissions' },
  { name: 'idempotencyKey', label: 'Idempotency key' },
  { name: 'requestId', label: 'Request id' },
  { name: 'jobId', label: 'Job id' },
  { name: 'createdSince', label: 'Created since', placeholder: '2025-01-31T00:00:00Z' },
  { name: 'createdBefore', label: 'Created before', placeholder: '2025-01-31T00:00:00Z' },
];

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** The request as a curl command, with $TOKEN where the bearer token goes (never a real one). */
export function curlOf(req) {
  const url = `${location.origin}${req.path}${req.query ? `?${req.query.replace(/^\?/, '')}` : ''}`;
  const parts = ['curl', '-X', req.method, shellQuote(url), '-H', '"Authorization: Bearer $TOKEN"'];
  for (const [k, v] of Object.entries(req.requestHeaders ?? {})) if (v !== null && v !== undefined) parts.push('-H', shellQuote(`${k}: ${v}`));
  if (req.requestBody !== null && req.requestBody !== undefined) parts.push('--data', shellQuote(JSON.stringify(req.requestBody)));
  return parts.join(' ');
}

async function requests(ctx) {
  const id = ctx.params.get('id');
  if (id) return requestDetail(ctx, id);
  const values = paramsOf(ctx.params, [...REQUEST_FILTERS.map((f) => f.name), 'cursor']);
  add(ctx.content, filters(REQUEST_FILTERS, ctx.params));
  const r = await api('GET', '/v1/requests', { query: { limit: 50, ...values } });
  if (r.absent) return void add(ctx.content, h('p', {}, 'The request log is not available on this deployment.'));
  if (!r.ok) return void add(ctx.content, problem(r));
  add(ctx.content, 
    table('Requests, newest first', [
      { label: 'Request', cell: (q) => link(`/console/requests?id=${q.id}`, `${q.method} ${q.path}`) },
      { label: 'Status', cell: (q) => String(q.status) },
      { label: 'Duration (ms)', cell: (q) => String(q.durationMs), num: true },
      { label: 'Idempotency key', cell: (q) => (q.idempotencyKey ? [code(q.idempotencyKey), q.idempotentReplayed ? ' (replayed)' : ''] : '—') },
      { label: 'Job', cell: (q) => (q.jobId ? link(`/console/jobs?id=${q.jobId}`, q.jobId) : '—') },
      { label: 'Error', cell: (q) => (q.errorCode ? code(q.errorCode) : '—') },
      { label: 'Time', cell: (q) => timeEl(q.createdAt) },
    ], r.body.items, 'No requests match these filters.'),
    nextLink(r.body.nextCursor, values),
  );
}

async function requestDetail(ctx, id) {
  add(ctx.content, h('p', {}, link('/console/requests', 'All requests')));
  const r = await api('GET', `/v1/requests/${encodeURIComponent(id)}`);
  if (!r.ok) return void add(ctx.content, problem(r));
  const q = r.body;
  const curl = curlOf(q);
  const copy = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    try {
      await navigator.clipboard.writeText(curl);
      ctx.say('Copied the curl command (with $TOKEN in place of a token).');
    } catch {
      ctx.say('Copy it from the box below.');
    }
  } }, 'Copy as curl');
  add(ctx.content, 
    section(`${q.method} ${q.path}`,
      facts([
        ['Status', String(q.status)], ['Request id', code(q.requestId)], ['Time', timeEl(q.createdAt)], ['Duration', `${q.durationMs} ms`],
        ['Idempotency key', q.idempotencyKey ? code(q.idempotencyKey) : '—'], ['Replayed', q.idempotentReplayed ? 'yes' : 'no'],
        ['Job', q.jobId ? link(`/console/jobs?id=${q.jobId}`, q.jobId) : '—'], ['Client', code(q.clientId)], ['Principal', q.principalId ?? '—'],
      ])),
    section('Request headers', json(q.requestHeaders ?? {})),
    section('Request body', q.requestBody === null ? h('p', {}, 'No JSON body.') : json(q.requestBody), q.requestBodyTruncated ? h('p', {}, 'Truncated at 16 KiB.') : null),
    section('Response body', q.responseBody === null ? h('p', {}, 'No JSON body.') : json(q.responseBody), q.responseBodyTruncated ? h('p', {}, 'Truncated at 16 KiB.') : null),
    section('As curl', h('div', { class: 'actions' }, copy), h('pre', {}, h('code', { id: 'curl' }, curl))),
  );
}

// ---------------------------------------------------------------- Jobs
const JOB_FILTERS = [
  { name: 'status', label: 'Status', options: ['processing', 'succeeded', 'failed', 'canceled'] },
  { name: 'kind', label: 'Kind', placeholder: 'submission.create' },
  { name: 'createdSince', label: 'Created since', placeholder: '2025-01-31T00:00:00Z' },
  { name: 'createdBefore', label: 'Created before', placeholder: '2025-01-31T00:00:00Z' },
];

function cancelButton(ctx, job, after) {
  if (ctx.session.readOnly || job.status !== 'processing') return null;
  return h('button', { type: 'button', class: 'danger', 'aria-describedby': `job-${job.id}`, onclick: () => mutate(ctx, 'POST', `/v1/jobs/${job.id}/cancel`, undefined, after) }, 'Cancel');
}

async function jobs(ctx) {
  const id = ctx.params.get('id');
  if (id) return jobDetail(ctx, id);
  const values = paramsOf(ctx.params, [...JOB_FILTERS.map((f) => f.name), 'cursor']);
  add(ctx.content, filters(JOB_FILTERS, ctx.params));
  const r = await api('GET', '/v1/jobs', { query: { limit: 50, ...values } });
  if (!r.ok) return void add(ctx.content, problem(r));
  add(ctx.content, 
    table('Jobs, newest first', [
      { label: 'Job', cell: (j) => link(`/console/jobs?id=${j.id}`, h('span', { id: `job-${j.id}` }, `${j.kind} ${j.id}`)) },
      { label: 'Status', cell: (j) => j.status },
      { label: 'Error', cell: (j) => (j.error ? code(j.error.code) : '—') },
      { label: 'Created', cell: (j) => timeEl(j.createdAt) },
      { label: 'Actions', cell: (j) => cancelButton(ctx, j, () => location.reload()) ?? '—' },
    ], r.body.items, 'No jobs match these filters.'),
    nextLink(r.body.nextCursor, values),
  );
}

async function jobDetail(ctx, id) {
  add(ctx.content, h('p', {}, link('/console/jobs', 'All jobs')));
  const box = h('div');
  add(ctx.content, box);
  const render = async () => {
    const r = await api('GET', `/v1/jobs/${encodeURIComponent(id)}`);
    box.replaceChildren();
    if (!r.ok) return void box.append(problem(r));
    const job = r.body;
    box.append(
      section(`Job ${job.id}`,
        facts([['Kind', h('span', { id: `job-${job.id}` }, job.kind ?? '—')], ['Status', h('span', { 'data-testid': 'job-status' }, job.status)], ['Created', timeEl(job.createdAt)], ['Updated', timeEl(job.updatedAt)]]),
        h('div', { class: 'actions' }, cancelButton(ctx, job, render)),
      ),
      job.error ? section('Error', json(job.error)) : null,
      job.result ? section('Result', json(job.result)) : null,
      section('Requests of this job', link(`/console/requests?jobId=${job.id}`, 'Show the requests that carried this job')),
    );
  };
  await render();
}

// ---------------------------------------------------------------- Submissions
const SUBMISSION_FILTERS = [
  { name: 'externalRef', label: 'External ref' },
  { name: 'status', label: 'Status', options: ['submitted', 'withdrawn', 'bound'] },
  { name: 'principalId', label: 'Principal id' },
  { name: 'createdSince', label: 'Created since', placeholder: '2025-01-31T00:00:00Z' },
];

async function submissions(ctx) {
  const id = ctx.params.get('id');
  if (id) return submissionDetail(ctx, id);
  const values = paramsOf(ctx.params, [...SUBMISSION_FILTERS.map((f) => f.name), 'cursor']);
  add(ctx.content, filters(SUBMISSION_FILTERS, ctx.params));
  const r = await api('GET', '/v1/submissions', { query: { limit: 50, ...values } });
  if (!r.ok) return void add(ctx.content, problem(r));
  add(ctx.content, 
    table('Submissions, newest first', [
      { label: 'Submission', cell: (s) => link(`/console/submissions?id=${s.submissionId}`, s.submissionName) },
      { label: 'External ref', cell: (s) => code(s.externalRef) },
      { label: 'Status', cell: (s) => s.status },
      { label: 'Clearance', cell: (s) => s.clearance?.status ?? '—' },
      { label: 'Created', cell: (s) => timeEl(s.createdAt) },
    ], r.body.items, 'No submissions match these filters.'),
    nextLink(r.body.nextCursor, values),
  );
}

async function submissionDetail(ctx, id) {
  add(ctx.content, h('p', {}, link('/console/submissions', 'All submissions')));
  const r = await api('GET', `/v1/submissions/${encodeURIComponent(id)}`);
  if (!r.ok) return void add(ctx.content, problem(r));
  const s = r.body;
  const [attachments, quotes, receipts, policies] = await Promise.all([
    listAll(`/v1/submissions/${s.submissionId}/attachments`, {}, 5),
    listAll(`/v1/submissions/${s.submissionId}/quotes`, {}, 5),
    api('GET', `/v1/submissions/${s.submissionId}/receipts`, { query: { limit: 200 } }),
    s.status === 'bound' ? listAll('/v1/policies', {}, 5) : Promise.resolve({ ok: true, items: [] }),
  ]);
  const events = [{ at: s.createdAt, title: 'Created', body: facts([['External ref', code(s.externalRef)], ['Product', code(s.productId)], ['Effective date', s.effectiveDate], ['Principal', s.principalId ?? '—']]) }];
  if (s.clearance) events.push({ at: s.clearance.decidedAt ?? s.createdAt, title: `Clearance: ${s.clearance.status}`, body: facts([['Basis', s.clearance.basis ?? '—'], ['Duplicate of', s.clearance.duplicateOf ?? '—']]) });
  if (s.requirements) {
    const due = s.requirements.currentlyDue ?? [];
    events.push({ at: s.updatedAt, title: 'Requirements due', body: due.length ? h('ul', {}, due.map((d) => h('li', {}, code(d)))) : h('p', {}, `Nothing due (requirements version ${s.requirements.version}).`) });
  }
  if (attachments.ok) {
    for (const a of attachments.items) {
      events.push({ at: a.createdAt, title: `Attachment: ${a.fileName}`, body: [facts([['Document type', a.documentType ?? '—'], ['Type', a.contentType], ['Size', `${a.sizeBytes} bytes`], ['SHA-256', code(a.sha256)]]),
        link(`/v1/submissions/${s.submissionId}/attachments/${a.attachmentId}/content`, `Download ${a.fileName}`)] });
    }
  }
  if (!quotes.absent && quotes.ok) {
    for (const q of quotes.items) {
      events.push({ at: q.createdAt, title: `Quote ${q.status}`, body: facts([['Quote', link(`/console/quotes?submissionId=${s.submissionId}`, q.quoteId)], ['Option', q.option ? `limit ${q.option.limit}, retention ${q.option.retention}` : '—'], ['Premium', q.premium ? `${q.premium.amount} ${q.premium.currency}` : '—'], ['Valid until', timeEl(q.validUntil)]]) });
      if (q.status === 'bound') events.push({ at: q.updatedAt, title: 'Bound', body: h('p', {}, `Quote ${q.quoteId} was bound.`) });
    }
  }
  if (policies.ok) {
    for (const p of policies.items.filter((p) => p.submissionId === s.submissionId)) {
      events.push({ at: p.createdAt, title: `Policy ${p.policyNumber} (${p.status})`, body: link(`/console/policies?id=${p.policyId}`, `Policy ${p.policyNumber}`) });
    }
  }
  if (s.withdrawal) events.push({ at: s.withdrawal.withdrawnAt, title: 'Withdrawn', body: facts([['Reason', s.withdrawal.reason], ['Note', s.withdrawal.note ?? '—']]) });
  const receiptItems = receipts.ok ? receipts.body.items : [];
  const checked = await Promise.all(receiptItems.map(async (rc) => ({ rc, check: await verifyReceipt(rc.jws) })));
  for (const { rc, check } of checked) {
    events.push({
      at: rc.issuedAt,
      title: `Receipt ${rc.seq}: ${rc.kind}`,
      receipt: true,
      body: [
        h('p', { class: check.verified ? 'verified' : 'not-verified', 'data-receipt-seq': String(rc.seq) }, check.verified ? 'Verified' : `Not verified${check.reason ? ` (${check.reason})` : ''}`),
        h('details', {}, h('summary', {}, 'Receipt payload and JWS'), json(check.payload ?? null), h('pre', {}, h('code', {}, rc.jws))),
      ],
    });
  }
  events.sort((a, b) => String(a.at).localeCompare(String(b.at)));
  add(ctx.content, 
    section(`${s.submissionName}`, facts([['Submission', code(s.submissionId)], ['Status', s.status], ['Applicant', s.applicant?.legalName ?? '—'], ['Updated', timeEl(s.updatedAt)]])),
    section('Timeline', h('ol', { class: 'timeline' }, events.map((e) => h('li', {}, h('span', { class: 'when' }, timeEl(e.at)), h('h3', {}, e.title), e.body)))),
    receipts.ok ? null : section('Receipts', problem(receipts)),
  );
}

// ---------------------------------------------------------------- Quotes
const QUOTE_FILTERS = [
  { name: 'submissionId', label: 'Submission id' },
  { name: 'status', label: 'Status', options: ['open', 'referred', 'declined', 'bound', 'expired', 'superseded', 'not_taken'] },
];

function countdown(validUntil) {
  if (!validUntil) return '—';
  const ms = new Date(validUntil).getTime() - Date.now();
  if (ms <= 0) return h('span', {}, timeEl(validUntil), ' (passed)');
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  return h('span', {}, timeEl(validUntil), ` (${hours} h ${minutes} min left)`);
}

async function quotes(ctx) {
  add(ctx.content, filters(QUOTE_FILTERS, ctx.params));
  const submissionId = ctx.params.get('submissionId');
  const status = ctx.params.get('status') || undefined;
  let ids = submissionId ? [submissionId] : [];
  if (!submissionId) {
    const s = await api('GET', '/v1/submissions', { query: { limit: 20 } });
    if (!s.ok) return void add(ctx.content, problem(s));
    ids = s.body.items.map((x) => x.submissionId);
  }
  const all = [];
  for (const id of ids) {
    const q = await listAll(`/v1/submissions/${encodeURIComponent(id)}/quotes`, status ? { status } : {}, 3);
    if (q.absent) return void add(ctx.content, h('p', {}, 'Quotes are not available on this deployment.'));
    if (!q.ok) return void add(ctx.content, problem(q));
    all.push(...q.items);
  }
  add(ctx.content, 
    h('p', {}, submissionId ? `Quotes of submission ${submissionId}.` : 'Quotes of the 20 newest submissions.'),
    table('Quotes', [
      { label: 'Quote', cell: (q) => code(q.quoteId) },
      { label: 'Submission', cell: (q) => link(`/console/submissions?id=${q.submissionId}`, q.submissionId) },
      { label: 'Status', cell: (q) => q.status },
      { label: 'Option', cell: (q) => (q.option ? `limit ${q.option.limit}, retention ${q.option.retention}` : '—') },
      { label: 'Premium', cell: (q) => (q.premium ? `${q.premium.amount} ${q.premium.currency}` : '—') },
      { label: 'Valid until', cell: (q) => countdown(q.validUntil) },
      { label: 'Referral', cell: (q) => (q.referral ? `${q.referral.decision ? q.referral.decision.outcome : 'waiting'}; due ${new Date(q.referral.dueBy).toLocaleString()}` : '—') },
    ], all, 'No quotes.'),
  );
}

// ---------------------------------------------------------------- Policies
const POLICY_FILTERS = [
  { name: 'status', label: 'Status', options: ['pending', 'active', 'cancelled', 'expired'] },
  { name: 'productId', label: 'Product id' },
  { name: 'policyNumber', label: 'Policy number' },
  { name: 'updatedSince', label: 'Updated since', placeholder: '2025-01-31T00:00:00Z' },
];

async function policies(ctx) {
  const id = ctx.params.get('id');
  if (id) return policyDetail(ctx, id);
  const values = paramsOf(ctx.params, [...POLICY_FILTERS.map((f) => f.name), 'cursor']);
  add(ctx.content, filters(POLICY_FILTERS, ctx.params));
  const r = await api('GET', '/v1/policies', { query: { limit: 50, ...values } });
  if (!r.ok) return void add(ctx.content, problem(r));
  add(ctx.content, 
    table('Policies', [
      { label: 'Policy number', cell: (p) => link(`/console/policies?id=${p.policyId}`, p.policyNumber) },
      { label: 'Insured', cell: (p) => p.insured?.legalName ?? '—' },
      { label: 'Status', cell: (p) => p.status },
      { label: 'Effective', cell: (p) => p.effectiveDate },
      { label: 'Expires', cell: (p) => p.expirationDate },
      { label: 'Premium', cell: (p) => (p.premium ? `${p.premium.amount} ${p.premium.currency}` : '—') },
    ], r.body.items, 'No policies match these filters.'),
    nextLink(r.body.nextCursor, values),
  );
}

async function policyDetail(ctx, id) {
  add(ctx.content, h('p', {}, link('/console/policies', 'All policies')));
  const r = await api('GET', `/v1/policies/${encodeURIComponent(id)}`);
  if (!r.ok) return void add(ctx.content, problem(r));
  const p = r.body;
  add(ctx.content, section(`Policy ${p.policyNumber}`, facts([
    ['Status', p.status], ['Insured', p.insured?.legalName], ['Product', code(p.productId)], ['Effective', p.effectiveDate], ['Expires', p.expirationDate],
    ['Premium', p.premium ? `${p.premium.amount} ${p.premium.currency}` : '—'], ['Submission', p.submissionId ? link(`/console/submissions?id=${p.submissionId}`, p.submissionId) : '—'], ['Quote', p.quoteId ?? '—'],
  ])));
  const docs = await api('GET', `/v1/policies/${encodeURIComponent(p.policyId)}/documents`);
  if (docs.ok) {
    add(ctx.content, section('Documents', table('Documents to download', [
      { label: 'Document', cell: (d) => link(`/v1/policies/${p.policyId}/documents/${d.documentId}/content`, d.fileName) },
      { label: 'Kind', cell: (d) => d.kind },
      { label: 'Size', cell: (d) => `${d.sizeBytes} bytes` },
      { label: 'SHA-256', cell: (d) => code(d.sha256) },
    ], docs.body.items, 'No documents.')));
  }
}

// ---------------------------------------------------------------- Events
const EVENT_FILTERS = [
  { name: 'types', label: 'Types', placeholder: 'job.failed,submission.created' },
  { name: 'since', label: 'Since', placeholder: '2025-01-31T00:00:00Z' },
];

async function events(ctx) {
  const values = paramsOf(ctx.params, ['types', 'since', 'cursor']);
  if (!values.since && !values.cursor) values.since = since24h();
  add(ctx.content, filters(EVENT_FILTERS, ctx.params), h('p', {}, `Oldest first${ctx.params.get('since') || values.cursor ? '' : ', from 24 hours ago'}.`));
  const r = await api('GET', '/v1/events', { query: { limit: 50, ...values } });
  if (!r.ok) return void add(ctx.content, problem(r));
  const items = r.body.items;
  add(ctx.content, 
    items.length === 0
      ? h('p', {}, 'No events.')
      : h('ul', { class: 'events' }, items.map((e) => h('li', {}, h('details', {}, h('summary', {}, code(e.type), ' ', timeEl(e.timestamp), ' ', e.id), json(e))))),
    items.length > 0 ? nextLink(r.body.nextCursor, { ...values, since: '' }) : null,
  );
}

// ---------------------------------------------------------------- Webhooks
const DELIVERY_FILTERS = [
  { name: 'status', label: 'Status', options: ['pending', 'succeeded', 'failed'] },
  { name: 'eventId', label: 'Event id' },
];

async function webhooks(ctx) {
  const id = ctx.params.get('id');
  if (id) return endpointDetail(ctx, id);
  const r = await api('GET', '/v1/webhook-endpoints', { query: { limit: 50 } });
  if (!r.ok) return void add(ctx.content, problem(r));
  add(ctx.content, table('Webhook endpoints', [
    { label: 'Endpoint', cell: (e) => link(`/console/webhooks?id=${e.endpointId}`, e.url) },
    { label: 'Status', cell: (e) => `${e.status}${e.disabledReason ? ` (${e.disabledReason})` : ''}` },
    { label: 'Event types', cell: (e) => e.eventTypes.join(', ') },
    { label: 'Description', cell: (e) => e.description ?? '—' },
  ], r.body.items, 'No webhook endpoints.'));
}

async function endpointDetail(ctx, id) {
  add(ctx.content, h('p', {}, link('/console/webhooks', 'All endpoints')));
  const r = await api('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
  if (!r.ok) return void add(ctx.content, problem(r));
  const e = r.body;
  add(ctx.content, section(e.url, facts([['Endpoint', code(e.endpointId)], ['Status', e.status], ['Event types', e.eventTypes.join(', ')], ['Created', timeEl(e.createdAt)]])));
  if (!ctx.session.readOnly) {
    const eventInput = h('input', { id: 'resend-event', name: 'eventId', type: 'text', autocomplete: 'off', required: true });
    const resend = h('form', { class: 'filters', 'aria-label': 'Resend from an event', onsubmit: async (ev) => {
      ev.preventDefault();
      ctx.say('Looking up the event…');
      const event = await api('GET', `/v1/events/${encodeURIComponent(eventInput.value.trim())}`);
      if (!event.ok) return ctx.say(`No such event: ${errorText(event)}`, true);
      await mutate(ctx, 'POST', `/v1/webhook-endpoints/${e.endpointId}/recover`, { since: event.body.timestamp });
    } }, h('div', {}, h('label', { for: 'resend-event' }, 'Event to resend from (id)'), eventInput), h('div', {}, h('button', { type: 'submit' }, 'Resend from this event')));
    add(ctx.content, section('Actions',
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => mutate(ctx, 'POST', `/v1/webhook-endpoints/${e.endpointId}/ping`) }, 'Ping')),
      h('p', {}, 'Resend every matching event from an event on (its time):'), resend));
  }
  const values = paramsOf(ctx.params, ['status', 'eventId', 'cursor']);
  const d = await api('GET', `/v1/webhook-endpoints/${e.endpointId}/deliveries`, { query: { limit: 50, ...values } });
  const list = [filters(DELIVERY_FILTERS, ctx.params)];
  const hidden = h('input', { type: 'hidden', name: 'id', value: e.endpointId });
  list[0].prepend(hidden);
  if (!d.ok) list.push(problem(d));
  else {
    list.push(table('Deliveries', [
      { label: 'Event', cell: (x) => [code(x.eventType), ' ', x.eventId] },
      { label: 'Status', cell: (x) => x.status },
      { label: 'Attempts', cell: (x) => String(x.attempts), num: true },
      { label: 'Last attempt', cell: (x) => timeEl(x.lastAttemptAt) },
      { label: 'Last response', cell: (x) => (x.lastResponseStatus ? `HTTP ${x.lastResponseStatus}` : x.lastError ?? '—') },
    ], d.body.items, 'No deliveries.'), nextLink(d.body.nextCursor, { id: e.endpointId, ...values }));
  }
  add(ctx.content, section('Deliveries', list));
}

export const PAGES = { overview, requests, jobs, submissions, quotes, policies, events, webhooks };
