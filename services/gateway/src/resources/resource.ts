// What a resource of the API is to the gateway: a folder under resources/ whose index.ts exports one
// Resource, listed once in resources/index.ts. The app mounts its routes, the pipeline asks its
// public route (answered without a token) before authentication, and the OpenAPI document takes its
// tag, paths, schemas, job results and event data from it, all in the order of that list.
import type Router from '@koa/router';
import type { GatewayState, PublicRoute } from '../context.js';
import type { Obj } from '../openapi/common.js';
import type { Schema } from '../openapi/schemas.js';
import type { RouteDeps } from './deps.js';

export type { PublicRoute } from '../context.js';

/** A resource's part of the OpenAPI document. */
export interface ResourceOpenApi {
  /** The tag its operations are grouped under, when it introduces one (the document lists tags in the resources' order). */
  tag?: { name: string; description: string };
  /** Its paths (`/v1/…` and any public ones); a path of one environment only (a UAT test helper) is left out of the other's. */
  paths?(ctx: { environment: string }): Obj;
  /** The whole resource exists in UAT only (test clocks): another environment's document has none of its parts. */
  uatOnly?: boolean;
  /** Its `components.schemas`; a name two resources define is an error when the document is built. */
  schemas?: Readonly<Record<string, Schema>> | ((parts: OpenApiParts) => Record<string, Schema>);
  /** What its mutations' jobs return: members of `JobResult`'s anyOf. */
  jobResults?: readonly Schema[];
  /**
   * The `data` of each event type it emits. The document's `webhooks` (one delivery per type) carry
   * it, and the SDK's event types are generated from those (scripts/gen-sdk-events.mjs): an event type
   * no resource lists is delivered, and typed, as an object.
   */
  eventData?: Readonly<Record<string, Schema>>;
  /** Entries of the document's top-level `webhooks` (the deliveries a receiver gets). */
  webhooks?(parts: OpenApiParts): Obj;
}

/** What the document gathers from every resource, for the resources that describe them all. */
export interface OpenApiParts {
  /** Every resource's jobResults, in the list's order. */
  jobResults: readonly Schema[];
  /** Every resource's eventData. */
  eventData: Readonly<Record<string, Schema>>;
}

export interface Resource {
  /** Its folder under resources/. */
  readonly name: string;
  /** Registers its routes on the /v1 router. */
  routes?(router: Router<GatewayState>, deps: RouteDeps): void;
  /** Its route answered before authentication, if it has one. */
  publicRoute?(deps: RouteDeps): PublicRoute;
  openapi: ResourceOpenApi;
}
