// What the SDK's generators share (scripts/gen-sdk-types.mjs, scripts/gen-sdk-events.mjs): the
// OpenAPI document the gateway serves (from its build: `npm run build` first), JSON Schema written
// as TypeScript, and writing a generated file or, with --check, failing when it is stale.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The document as GET /v1/openapi.json serves it (the deployment's URLs do not reach the schemas). */
export async function loadDocument() {
  const { buildOpenApiDocument } = await import(`${ROOT}services/gateway/dist/openapi/document.js`);
  return buildOpenApiDocument({ baseUrl: 'https://api.example.com', tokenUrl: 'https://auth.example.com/oauth2/token', scope: 'api.example.com/access', environment: 'uat' });
}

/** Which gateway resource declares each schema and operation (openApiOwners of the built gateway). */
export async function loadOwners() {
  const { openApiOwners } = await import(`${ROOT}services/gateway/dist/openapi/document.js`);
  return openApiOwners();
}

export const quote = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The name of a `#/components/schemas/…` reference. */
export const refName = (ref) => ref.replace('#/components/schemas/', '');

/** Component schemas whose name would shadow a global type, by the name their wire type has instead. */
export const RENAMED = { Error: 'ErrorBody' };

/** A schema of one scalar type and no values of its own (Uuid, Timestamp, …): written out where it is used, never named. */
export const isScalar = (s) =>
  !s.$ref && !s.enum && s.const === undefined && !s.oneOf && !s.anyOf && !s.allOf && ['string', 'integer', 'number', 'boolean'].includes(s.type);

/**
 * The `ref` of schemaToTs for code that imports sdk/client/src/wire-types.ts: a component schema is
 * its wire type (`named` is told each name used), a scalar one is written out.
 */
export function wireRef(schemas, named) {
  const ref = (name, indent) => {
    if (isScalar(schemas[name])) return schemaToTs(schemas[name], { ref }, indent);
    const wire = RENAMED[name] ?? name;
    named(wire);
    return wire;
  };
  return ref;
}

/** A description as a JSDoc comment at `indent` (empty when there is none). */
export function jsdoc(text, indent = '') {
  if (!text) return '';
  const width = Math.max(60, 110 - indent.length - 3);
  const lines = text
    .replace(/\*\//g, '*\\/')
    .trimEnd()
    .split('\n')
    .flatMap((l) => (l.startsWith('|') ? [l] : wrap(l, width)));
  if (lines.length === 1 && lines[0].length <= width - 4) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

/**
 * Prose broken at spaces into lines of at most `width` characters, as the docs and the generated
 * comments are written: a longer word stays whole, and a code span is never cut.
 */
export function wrap(text, width = 100) {
  const out = [];
  let now = '';
  for (const word of text.match(/(?:`[^`]*`|[^ `])+/g) ?? ['']) {
    if (now && now.length + 1 + word.length > width) {
      out.push(now);
      now = word;
    } else now = now ? `${now} ${word}` : word;
  }
  out.push(now);
  return out;
}

/** ` type`, or the type alone when it starts on a line of its own (a long union). */
export const spaced = (t) => (t.startsWith('\n') ? t : ` ${t}`);

/** Union members on one line, or, when that is long, packed on lines of their own starting `| `. */
function union(members, indent) {
  const one = members.join(' | ');
  if (one.length <= 100 || one.includes('\n')) return one;
  const lines = [];
  let line = '';
  for (const m of members) {
    if (line && line.length + m.length + 3 > 110) {
      lines.push(line);
      line = '';
    }
    line += `${line ? ' ' : ''}| ${m}`;
  }
  lines.push(line);
  return `\n${lines.map((l) => `${indent}  ${l}`).join('\n')}`;
}

/**
 * A JSON Schema as a TypeScript type. `ref(name)` writes a `$ref` to a component schema (a name, or
 * the schema itself written out); with `docs`, object properties carry their descriptions as JSDoc.
 */
export function schemaToTs(schema, { ref, docs = false }, indent = '') {
  const go = (s, i = indent) => schemaToTs(s, { ref, docs }, i);
  if (schema.$ref) return ref(refName(schema.$ref), indent);
  if (schema.const !== undefined) return JSON.stringify(schema.const).replace(/^"(.*)"$/, "'$1'");
  if (schema.enum) return union(schema.enum.map((v) => (typeof v === 'string' ? quote(v) : String(v))), indent);
  if (schema.oneOf || schema.anyOf) return union((schema.oneOf ?? schema.anyOf).map((s) => go(s)), indent);
  if (schema.allOf) return schema.allOf.map((s) => go(s)).join(' & ');
  const types = [].concat(schema.type ?? []);
  if (types.length > 1) return types.map((t) => go({ ...schema, type: t })).join(' | ');
  switch (types[0]) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = go(schema.items ?? {});
      return /^\w+(<\w+>)?$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object': {
      const props = Object.entries(schema.properties ?? {});
      if (props.length === 0) return 'Record<string, unknown>';
      return `{\n${properties(props, new Set(schema.required ?? []), { ref, docs }, `${indent}  `)}${indent}}`;
    }
    default:
      return 'unknown';
  }
}

/** The members of an object type (or an interface's body), one a line, at `indent`. */
export function properties(props, required, opts, indent) {
  return props
    .map(([k, v]) => {
      const doc = opts.docs ? jsdoc(v.description, indent) : '';
      return `${doc}${indent}${/^\w+$/.test(k) ? k : quote(k)}${required.has(k) ? '' : '?'}:${spaced(schemaToTs(v, opts, indent))};\n`;
    })
    .join('');
}

/**
 * Writes `text` to `out`, or with --check on the command line exits 1 when `out` differs from it
 * (the tests run the generators that way).
 */
/** Writes `text` to `out` (removes it when text is undefined), or with --check exits 1 when it differs. */
export function writeOrCheck(out, text, command) {
  if (process.argv.includes('--check')) {
    let now;
    try {
      now = readFileSync(out, 'utf8');
    } catch {
      // missing: stale unless it should not exist
    }
    if (now !== text) {
      process.stderr.write(`${out} is ${text === undefined ? 'left over' : 'stale'}: run ${command}\n`);
      process.exit(1);
    }
  } else if (text === undefined) {
    rmSync(out);
    process.stdout.write(`removed ${out}\n`);
  } else {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
    process.stdout.write(`wrote ${out}\n`);
  }
}
