// Types of dev-env.mjs for the TypeScript that uses it (the tests).
export declare const DEV_ENV_FILE: string;
export declare const SHARED_SETTINGS: string[];
export declare function readDevEnv(file?: string): Record<string, string>;
export declare function updateDevEnv(settings: Record<string, string>, file?: string): string[];
