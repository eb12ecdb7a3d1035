// OpenAPI conformance: Stack.api() hands every response here; a response the published document
// does not describe fails the test that received it. (Filled in with the OpenAPI document.)
import type { ApiResponse } from './stack.js';

export function checkResponse(_method: string, _path: string, _res: ApiResponse): void {
  // Added with the developer-experience issue.
}
