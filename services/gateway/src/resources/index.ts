// The API's resources, each a folder beside this file: the one list the app mounts (routes and
// public routes), the OpenAPI document describes (tags, paths, schemas, job results, event data)
// and the tests that enumerate routes read. A new resource is a new folder whose index.ts exports a
// Resource, and one line here.
//
// The order is the document's (its tags and paths) and the router's. Where two resources' routes
// match the same path (none do today), the earlier one's methods come first in `Allow`.
import { attachments } from './attachments/index.js';
import { bind } from './bind/index.js';
import { clearance } from './clearance/index.js';
import { consoleResource } from './console/index.js';
import { events } from './events/index.js';
import { health } from './health/index.js';
import { jobs } from './jobs/index.js';
import { policies } from './policies/index.js';
import { products } from './products/index.js';
import { quotes } from './quotes/index.js';
import { receipts } from './receipts/index.js';
import type { Resource } from './resource.js';
import { requests } from './requests/index.js';
import { submissions } from './submissions/index.js';
import { testClocks } from './test-clocks/index.js';
import { webhooks } from './webhooks/index.js';

export type { PublicRoute, Resource } from './resource.js';

export const RESOURCES: readonly Resource[] = [health, policies, products, submissions, clearance, attachments, jobs, events, receipts, webhooks, quotes, bind, testClocks, requests, consoleResource];
