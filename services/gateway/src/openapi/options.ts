// What the OpenAPI document is built from: one environment's addresses and limits.
export interface OpenApiOptions {
  /** {base_url}: the public API address. */
  baseUrl: string;
  /** {auth_url}/oauth2/token. */
  tokenUrl: string;
  /** The environment's access scope, `<api_host>/access`. */
  scope: string;
  environment: string;
  /** Most values a JSON body may hold (JSON_MAX_VALUES); the default when absent. */
  jsonMaxValues?: number;
}
