// The resource list is the only place a resource is registered: every folder here is in it, once, by
// its folder's name, so a new resource's folder without its line (or a line without its folder)
// fails here rather than going missing from the app and the document.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESOURCES } from './index.js';

describe('RESOURCES', () => {
  it('lists every folder of resources/ once, by name', () => {
    const folders = readdirSync(new URL('.', import.meta.url), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(RESOURCES.map((r) => r.name).sort()).toEqual(folders);
  });

  it('gives each tag once', () => {
    const tags = RESOURCES.flatMap((r) => (r.openapi.tag ? [r.openapi.tag.name] : []));
    expect(new Set(tags).size).toBe(tags.length);
  });
});
