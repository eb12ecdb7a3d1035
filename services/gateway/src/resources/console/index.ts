// The partner console (API.md "Partner console"): POST /v1/console/sessions mints a single-use link;
// the public route serves the console's pages, static files and link exchange under /console
// (pages.ts); the session cookie authenticates the pages' calls to /v1 (cookie-auth.ts).
import type { Resource } from '../resource.js';
import { consolePaths, consoleSchemas } from './openapi.js';
import { consoleRoute } from './pages.js';
import { consoleRoutes } from './routes.js';

export const consoleResource: Resource = {
  name: 'console',
  routes: consoleRoutes,
  publicRoute: consoleRoute,
  openapi: {
    tag: { name: 'Console', description: 'The partner console: a browser view of the partner\'s own account, opened from a single-use link.' },
    paths: consolePaths,
    schemas: consoleSchemas,
  },
};
