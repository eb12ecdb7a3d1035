// Test clocks (API.md "Test clocks", UAT only; issue 44): a partner's own time for its tests. Created,
// advanced and deleted by jobs, read from the policy service. UAT only: in production the routes are
// not registered (404) and the document has none of this resource (uatOnly).
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { testClockPaths, testClockSchemas } from './openapi.js';
import { testClockRoutes } from './routes.js';

export const testClocks: Resource = {
  name: 'test-clocks',
  routes: testClockRoutes,
  openapi: {
    uatOnly: true,
    tag: { name: 'Test clocks', description: 'UAT only: time a partner can move, so its tests see quotes expire and policies take effect in seconds.' },
    paths: testClockPaths,
    schemas: testClockSchemas,
    jobResults: [ref('TestClock'), ref('TestClockAdvanced'), ref('TestClockDeleted')],
  },
};
