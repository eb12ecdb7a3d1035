// The partner console (client.console: POST /v1/console/sessions). Mint a link on your server,
// where the client credentials are, and hand its url to the person who opens it: it works once,
// within 10 minutes, and opens a browser session that acts as this client (read-only if asked).
// The types are generated from the OpenAPI document (wire-types.ts).
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import type { WithResponse } from './transport.js';
import type { ConsoleSessionCreate, ConsoleSessionLink } from './wire-types.js';

export type { ConsoleSessionCreate, ConsoleSessionLink } from './wire-types.js';

export class Console {
  constructor(private readonly connection: Connection) {}

  /** POST /v1/console/sessions: a single-use console link (answered at once; needs requests/read). */
  async createSession(params: ConsoleSessionCreate = {}, opts: CallOptions = {}): Promise<WithResponse<ConsoleSessionLink>> {
    return (await this.connection.transport.request<ConsoleSessionLink>({ method: 'POST', path: '/v1/console/sessions', json: params, ...opts })).body;
  }
}
