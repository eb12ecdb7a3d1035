// OpenAPI conformance: Stack.api() hands every response here; a response the published document
// does not describe fails the test that received it. "Describes" means: the path and method are an
// operation of the document (or the document's own rule for unknown paths and methods: 404 and
// 405 after authentication), the status is one of the operation's responses, every required header
// of that response is present and matches its schema (X-Request-Id on all of them), the
// Content-Type is one the response lists, and a JSON body validates against its schema. The
// document is the one the gateway serves, built by the same code; its schemas are compiled by Ajv
// (JSON Schema 2020-12, as OpenAPI 3.1 uses) once per process.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { buildOpenApiDocument } from '../../services/gateway/src/openapi/document.js';
import type { ApiResponse } from './stack.js';

// ajv-formats is CommonJS; under NodeNext its default export may arrive as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

type Obj = Record<string, unknown>;
const DOC_ID = 'https://partner.invalid/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Top-level OpenAPI fields: not JSON Schema keywords, but the document is registered as one schema. */
const OPENAPI_FIELDS = ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components', 'webhooks', 'jsonSchemaDialect', 'externalDocs'];

/** Responses the document's description gives for paths and methods it does not list. */
const UNKNOWN_PATH = { 401: 'Unauthenticated', 403: 'Forbidden', 404: 'NotFound', 429: 'RateLimited', 500: 'Internal', 503: 'Unavailable' };
const UNKNOWN_METHOD = { 401: 'Unauthenticated', 403: 'Forbidden', 405: 'MethodNotAllowed', 429: 'RateLimited', 500: 'Internal', 503: 'Unavailable' };

interface Route {
  template: string;
  pattern: RegExp;
  literalSegments: number;
  item: Obj;
}

class Conformance {
  readonly doc: Obj;
  private readonly ajv: Ajv2020;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor() {
    this.doc = buildOpenApiDocument({
      baseUrl: 'https://api.uat.test',
      tokenUrl: 'https://auth.uat.test/oauth2/token',
      scope: 'api.uat.test/access',
      environment: 'uat',
    });
    this.ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(this.ajv);
    this.ajv.addVocabulary(OPENAPI_FIELDS);
    // OpenAPI's own schema keywords: annotations for code generators (oneOf does the validating).
    this.ajv.addVocabulary(['discriminator', 'xml', 'example']);
    this.ajv.addSchema(this.doc, DOC_ID);
    const paths = this.doc.paths as Record<string, Obj>;
    this.routes = Object.entries(paths)
      .map(([template, item]) => {
        const segments = template.split('/');
        const source = segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
        return { template, pattern: new RegExp(`^${source}$`), literalSegments: segments.filter((s) => !s.startsWith('{')).length, item };
      })
      // The most specific template wins (OpenAPI: concrete paths before templated ones).
      .sort((a, b) => b.literalSegments - a.literalSegments);
    // Compile every body schema now: a broken schema fails the first test, not a random later one.
    for (const [template, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const op = item[method] as Obj | undefined;
        if (!op) continue;
        for (const [status, r] of Object.entries(op.responses as Obj)) {
          const resolved = this.resolve(r as Obj);
          for (const [mediaType, media] of Object.entries((resolved.content ?? {}) as Obj)) {
            if ((media as Obj).schema) this.validator(this.schemaPointer(template, method, status, r as Obj, mediaType));
          }
        }
      }
    }
  }

  /** Follows a local $ref (#/components/...). */
  resolve(o: Obj): Obj {
    let cur = o;
    for (let i = 0; i < 10 && typeof cur.$ref === 'string'; i++) cur = this.pointer(cur.$ref as string);
    return cur;
  }

  private pointer(ref: string): Obj {
    if (!ref.startsWith('#/')) throw new Error(`conformance: only local refs are supported (${ref})`);
    let cur: unknown = this.doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      cur = (cur as Obj)[key];
      if (cur === undefined) throw new Error(`conformance: unresolvable ref ${ref}`);
    }
    return cur as Obj;
  }

  private static escape(s: string): string {
    return s.replace(/~/g, '~0').replace(/\//g, '~1');
  }

  /** JSON pointer (in the document) of a response's body schema, through a response $ref if there is one. */
  private schemaPointer(template: string, method: string, status: string, r: Obj, mediaType: string): string {
    const base =
      typeof r.$ref === 'string'
        ? (r.$ref as string)
        : `#/paths/${Conformance.escape(template)}/${method}/responses/${status}`;
    return `${base}/content/${Conformance.escape(mediaType)}/schema`;
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.validators.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.validators.set(pointer, v);
    }
    return v;
  }

  /** The problems with a response, empty when the document describes it. */
  check(method: string, rawPath: string, res: ApiResponse): string[] {
    // The path as fetch sends it (dot segments resolved, as the server sees it), without the query.
    // Matched exactly, as the gateway's router does (and the document says): with a trailing slash it is an unlisted path.
    const path = new URL(rawPath, 'http://conformance.invalid').pathname;
    const m = method.toLowerCase();
    const route = this.routes.find((r) => r.pattern.test(path));
    // The document's description: every GET also answers HEAD (no body); OPTIONS answers 200 with Allow.
    const op = (route?.item[m] ?? (m === 'head' ? route?.item.get : undefined)) as Obj | undefined;
    let responses: Obj;
    let where: string;
    if (route && m === 'options' && res.status === 200) {
      const problems: string[] = [];
      if (!res.headers.get('allow')) problems.push('required header Allow is missing');
      if (!res.headers.get('x-request-id')) problems.push('required header X-Request-Id is missing');
      if (res.text !== '') problems.push('OPTIONS answered with a body');
      return problems.map((p) => `OPTIONS ${route.template} → 200: ${p}`);
    }
    if (!route) {
      where = `unlisted path ${path}`;
      responses = this.generic(UNKNOWN_PATH);
    } else if (!op) {
      where = `${method.toUpperCase()} ${route.template} (not an operation)`;
      responses = this.generic(UNKNOWN_METHOD);
    } else {
      where = `${method.toUpperCase()} ${route.template}`;
      responses = op.responses as Obj;
    }
    const status = String(res.status);
    const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : undefined;
    if (!key) return [`${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    const declared = responses[key] as Obj;
    const r = this.resolve(declared);
    const problems: string[] = [];

    for (const [name, h] of Object.entries((r.headers ?? {}) as Obj)) {
      const spec = this.resolve(h as Obj);
      const value = res.headers.get(name);
      if (value === null) {
        if (spec.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schema = spec.schema as Obj | undefined;
      if (schema) {
        const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
        const v = this.headerValidator(schema);
        if (!v(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(v.errors, { dataVar: '' })}`);
      }
    }

    const content = r.content as Obj | undefined;
    const contentType = res.headers.get('content-type');
    const bodyless = m === 'head' || res.status === 204 || res.status === 304;
    if (!content || bodyless) {
      if (res.text !== '') problems.push(`a body was sent where the document describes none: ${res.text.slice(0, 200)}`);
    } else {
      const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
      const mediaType = Object.keys(content).find(
        (t) => t === essence || t === '*/*' || (t.endsWith('/*') && essence.startsWith(t.slice(0, -1))),
      );
      if (!contentType) problems.push(`Content-Type is missing (documented: ${Object.keys(content).join(', ')})`);
      else if (!mediaType) problems.push(`Content-Type ${contentType} is not documented (documented: ${Object.keys(content).join(', ')})`);
      else if ((content[mediaType] as Obj).schema && /^application\/([\w.-]+\+)?json$/.test(essence)) {
        if (res.body === undefined) problems.push(`the body is not JSON: ${res.text.slice(0, 200)}`);
        else {
          const pointer = route && op ? this.schemaPointer(route.template, m, key, declared, mediaType) : `${declared.$ref as string}/content/${Conformance.escape(mediaType)}/schema`;
          const v = this.validator(pointer);
          if (!v(res.body)) {
            const errors = (v.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message ?? 'is invalid'}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
            problems.push(`body does not match ${pointer}: ${errors.join('; ')} — body: ${res.text.slice(0, 300)}`);
          }
        }
      }
    }
    return problems.map((p) => `${where} → ${status}: ${p}`);
  }

  private generic(table: Record<number, string>): Obj {
    return Object.fromEntries(Object.entries(table).map(([status, name]) => [status, { $ref: `#/components/responses/${name}` }]));
  }

  private readonly headerValidators = new Map<string, ValidateFunction>();
  private headerValidator(schema: Obj): ValidateFunction {
    const k = JSON.stringify(schema);
    let v = this.headerValidators.get(k);
    if (!v) {
      v = typeof schema.$ref === 'string' ? this.ajv.compile({ $ref: `${DOC_ID}${schema.$ref as string}` }) : this.ajv.compile(schema);
      this.headerValidators.set(k, v);
    }
    return v;
  }
}

let instance: Conformance | undefined;
/** The document's checker, built (and its schemas compiled) once per process. */
export function conformance(): Conformance {
  instance ??= new Conformance();
  return instance;
}

/** Throws, naming every difference, when the document does not describe the response. */
export function checkResponse(method: string, path: string, res: ApiResponse): void {
  const problems = conformance().check(method, path, res);
  if (problems.length > 0) {
    throw new Error(`response not described by the OpenAPI document:\n  ${problems.join('\n  ')}`);
  }
}
