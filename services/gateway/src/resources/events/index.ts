// The event feed: GET /v1/events (long-poll under Prefer: wait) and GET /v1/events/{eventId}.
import type { Resource } from '../resource.js';
import { eventPaths, eventSchemas } from './openapi.js';
import { eventRoutes } from './routes.js';

export const events: Resource = {
  name: 'events', routes: eventRoutes,
  openapi: {
    tag: { name: 'Events', description: "The event feed: what happened to the partner's resources, in order, with long-poll." },
    paths: eventPaths, schemas: eventSchemas,
  },
};
