// The request log's redaction, in one place (docs/api.md "Request log"): what of a request and its
// answer may be kept. Pure functions, no IO; request-log/recorder.ts applies them off the request's
// path, before an entry leaves the gateway, so nothing redacted ever reaches the stream or the store.
//
// - Headers: only the allow-list (REQUEST_LOG_HEADERS); Authorization, cookies and everything else
//   are dropped.
// - JSON bodies, request and response alike: every `secret` field (any member whose name is
//   `secret` or ends with it, in any case: `secret`, `clientSecret`, `webhook_secret`) removed at any
//   depth; every tax id (`taxId` and its other spellings: `tax_id`, `TaxID`, `tax-id`, `taxIdentifier`,
//   `tin`, `ssn`, `ein`, …) masked to its last four digits at any depth, whatever its format
//   (`123-45-6789`, `12 3456789`, a number).
// - A multipart body: its file as {fileName, contentType, sizeBytes, sha256}, never its bytes.
// - Anything else (text, binary, a body that did not parse): null, with its size.
// - Each body at most REQUEST_LOG_BODY_LIMIT_BYTES of its redacted JSON text; a longer one is kept
//   as the first bytes of that text (a string) with its truncated flag set.
import { REQUEST_LOG_BODY_LIMIT_BYTES, REQUEST_LOG_HEADERS, type LoggedFile } from '@partner/shared/domain/request-log';

const ALLOWED_HEADERS: ReadonlySet<string> = new Set(REQUEST_LOG_HEADERS);

/** The allow-listed request headers, keyed by lower-case name (repeated ones joined with ", "). */
export function allowedHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!ALLOWED_HEADERS.has(lower) || value === undefined) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Member names compared without case, `_`, `-` or spaces. */
const normalName = (name: string): string => name.toLowerCase().replace(/[-_\s]/g, '');

const TAX_ID_NAMES: ReadonlySet<string> = new Set(['taxid', 'taxidentifier', 'taxidnumber', 'taxnumber', 'taxno', 'tin', 'ssn', 'ein', 'fein', 'itin']);

/** Whether a member holds a secret (removed): `secret`, or a name ending with it. */
export const isSecretName = (name: string): boolean => normalName(name).endsWith('secret');

/** Whether a member holds a tax id (masked). */
export const isTaxIdName = (name: string): boolean => TAX_ID_NAMES.has(normalName(name));

/** What a member name means to redaction: kept as is, removed (a secret) or masked (a tax id). */
type NameRule = 'keep' | 'remove' | 'mask';

// Member names repeat (every item of a page has the same ones): each is classified once. Bounded,
// since request bodies may carry any names: when full it starts over.
const NAME_RULES_MAX = 4_096;
const nameRules = new Map<string, NameRule>();
function ruleOf(name: string): NameRule {
  let rule = nameRules.get(name);
  if (rule === undefined) {
    rule = isSecretName(name) ? 'remove' : isTaxIdName(name) ? 'mask' : 'keep';
    if (nameRules.size >= NAME_RULES_MAX) nameRules.clear();
    nameRules.set(name, rule);
  }
  return rule;
}

// JSON.stringify's replacer doing what redactJson does, without copying the value first: called for
// every member (and array index, whose names are digits, so always kept) before it is written.
function redactMember(this: unknown, name: string, member: unknown): unknown {
  if (name === '' || Array.isArray(this)) return member;
  const rule = ruleOf(name);
  if (rule === 'remove') return undefined;
  if (rule === 'mask' && member !== null && typeof member !== 'object') return maskTaxId(member);
  return member;
}

/**
 * Whether redaction could change a value's JSON text: some member, at any depth, is a secret or a tax
 * id, or some object has its own JSON form (toJSON, which could hold either). A walk of names only,
 * far cheaper than writing the text through a replacer.
 */
function mayNeedRedaction(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false;
  // Deeper than any body we answer or accept: let the replacer decide.
  if (depth > 64 || typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(value)) {
    for (const item of value) if (mayNeedRedaction(item, depth + 1)) return true;
    return false;
  }
  for (const name of Object.keys(value)) {
    if (ruleOf(name) !== 'keep' || mayNeedRedaction((value as Record<string, unknown>)[name], depth + 1)) return true;
  }
  return false;
}

/**
 * JSON.stringify(redactJson(value)): the redacted JSON text of a value (undefined for undefined), in
 * one pass. Most bodies hold nothing to redact (a page of policies): those are written as they are.
 */
export function redactedJsonText(value: unknown): string | undefined {
  return (mayNeedRedaction(value) ? JSON.stringify(value, redactMember) : JSON.stringify(value)) as string | undefined;
}

// Thrown by the bounded writer: its text passed the limit (FULL), or it met a value it does not
// write as JSON.stringify would (EXOTIC: left to JSON.stringify).
const FULL = Symbol('full');
const EXOTIC = Symbol('exotic');

/** Plain data, as JSON.parse makes it: what the bounded writer writes itself. */
const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === Array.prototype || proto === null;
};

/**
 * The start of redactedJsonText(value), past `limit` characters (so past `limit` bytes), or all of it
 * when shorter (`complete`): written member by member and stopped there, so that a body of 1 MB costs
 * the limit's worth of work, not its size (a flood of large bodies shares the gateway's event loop).
 * Every member goes through redactMember as under JSON.stringify; a string longer than the limit is
 * written from its first limit + 1 characters (the cut keeps fewer of them). Undefined for a value
 * holding anything but plain data (the caller writes that one with JSON.stringify).
 */
export function boundedRedactedJsonText(value: unknown, limit: number): { text: string; complete: boolean } | undefined {
  const parts: string[] = [];
  let length = 0;
  const put = (s: string): void => {
    parts.push(s);
    length += s.length;
    if (length > limit) throw FULL;
  };
  /** Whether JSON.stringify writes a value at all (it leaves out undefined, functions and symbols). */
  const written = (v: unknown): boolean => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
  /** Writes a value redactMember has seen (written(v) holds). */
  const write = (v: unknown): void => {
    if (v === null || typeof v !== 'object') {
      put(JSON.stringify(typeof v === 'string' && v.length > limit ? v.slice(0, limit + 1) : v));
      return;
    }
    if (!isPlain(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw EXOTIC;
    if (Array.isArray(v)) {
      put('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) put(',');
        const item = redactMember.call(v, String(i), v[i]);
        if (written(item)) write(item);
        else put('null');
      }
      put(']');
      return;
    }
    put('{');
    let first = true;
    for (const key of Object.keys(v)) {
      const member = redactMember.call(v, key, (v as Record<string, unknown>)[key]);
      if (!written(member)) continue;
      put(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
      first = false;
      write(member);
    }
    put('}');
  };
  try {
    if (written(value)) write(value);
    return { text: parts.join(''), complete: true };
  } catch (stop) {
    if (stop === FULL) return { text: parts.join(''), complete: false };
    if (stop === EXOTIC) return undefined;
    throw stop;
  }
}

/** A tax id as the log shows it: `****` and its last four digits (`****` alone when it has fewer). */
export function maskTaxId(value: unknown): string {
  const digits = typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? String(value).replace(/\D/g, '') : '';
  return digits.length >= 4 ? `****${digits.slice(-4)}` : '****';
}

/** A copy of a JSON value without secrets and with tax ids masked, at any depth. */
export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
    if (isSecretName(name)) continue;
    out[name] = isTaxIdName(name) && member !== null && typeof member !== 'object' ? maskTaxId(member) : redactJson(member);
  }
  return out;
}

/** What a request or response carried, as the recorder captured it. */
export type CapturedBody =
  /** No body at all (a GET, a 204). */
  | { kind: 'none' }
  /** A JSON value (the parsed request body, or the response object). */
  | { kind: 'json'; value: unknown; sizeBytes: number | null }
  /** A multipart upload: its file, never its bytes. */
  | { kind: 'multipart'; file: LoggedFile; sizeBytes: number | null }
  /** Anything else: kept as null, with its size when known. */
  | { kind: 'other'; sizeBytes: number | null };

/** A body as the log stores it. */
export interface LoggedBody {
  body: unknown;
  /** `body` as JSON text (what is shipped and stored), null when body is null. */
  text: string | null;
  truncated: boolean;
  sizeBytes: number | null;
}

/** The first `limit` bytes of a UTF-8 text, never cutting a character in two. */
export function truncateUtf8(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back up over continuation bytes (10xxxxxx) to the start of the character the cut falls in.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** Bodies marked as never changing (unchangingBody), with their redacted text once it is written. */
const unchanging = new WeakMap<object, { text: string | undefined } | null>();

/**
 * Marks a response body that is never changed, answered again and again (a settled job's, served from
 * memory on every poll): its redacted text is then written once, not for each request that answers it.
 * Returns the body.
 */
export function unchangingBody<T extends object>(body: T): T {
  if (!unchanging.has(body)) unchanging.set(body, null);
  return body;
}

/**
 * redactedJsonText(value), written once for a body marked unchanging. Only a text within the log's
 * limit is kept (what a body kept in memory costs beside itself stays bounded); a longer one, cut
 * when it is logged anyway, is written each time.
 */
function redactedTextOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return redactedJsonText(value);
  const known = unchanging.get(value);
  if (known === undefined) return redactedJsonText(value);
  if (known) return known.text;
  const text = redactedJsonText(value);
  if (text === undefined || text.length <= REQUEST_LOG_BODY_LIMIT_BYTES) unchanging.set(value, { text });
  return text;
}

/** A captured body redacted and held to the size limit. */
export function logBody(captured: CapturedBody, limit = REQUEST_LOG_BODY_LIMIT_BYTES): LoggedBody {
  switch (captured.kind) {
    case 'none':
      return { body: null, text: null, truncated: false, sizeBytes: null };
    case 'other':
      return { body: null, text: null, truncated: false, sizeBytes: captured.sizeBytes };
    case 'multipart': {
      const f = captured.file;
      const body = { fileName: f.fileName, contentType: f.contentType, sizeBytes: f.sizeBytes, sha256: f.sha256 };
      return { body, text: JSON.stringify(body), truncated: false, sizeBytes: captured.sizeBytes };
    }
    case 'json': {
      // Redacted while it is written (no copy of the value: a page of 50 policies is ~100 members
      // per item); `body` is read back from the text only when asked for (the recorder ships text).
      // A body far over the limit (its size known: a request's) is written only past the cut: a
      // prefix longer than the limit, which the cut below treats as the whole text.
      const bounded = captured.sizeBytes !== null && captured.sizeBytes > 4 * limit ? boundedRedactedJsonText(captured.value, limit) : undefined;
      const text = bounded ? bounded.text || undefined : redactedTextOf(captured.value);
      if (text === undefined) return { body: null, text: null, truncated: false, sizeBytes: captured.sizeBytes };
      // Cheap bound first: a text of at most limit/3 characters is at most limit bytes.
      if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) {
        return {
          get body(): unknown {
            return JSON.parse(text) as unknown;
          },
          text,
          truncated: false,
          sizeBytes: captured.sizeBytes ?? Buffer.byteLength(text),
        };
      }
      const cut = truncateUtf8(text, limit);
      return { body: cut, text: JSON.stringify(cut), truncated: true, sizeBytes: captured.sizeBytes ?? Buffer.byteLength(text) };
    }
  }
}
