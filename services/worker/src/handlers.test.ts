import { describe, expect, it } from 'vitest';
import { sandboxDirective } from './handlers.js';

describe('UAT sandbox directives', () => {
  it.each([
    ['sandbox:delay=1', { delayS: 1 }],
    ['sandbox:delay=60', { delayS: 60 }],
    ['sandbox:fail=unknown_product', { failCode: 'unknown_product' }],
    ['sandbox:fail=unavailable', { failCode: 'unavailable' }],
  ])('reads %s', (ref, expected) => {
    expect(sandboxDirective(ref)).toEqual(expected);
  });

  it.each(['sandbox:delay=0', 'sandbox:delay=61', 'sandbox:delay=5s', 'sandbox:fail=', 'sandbox:fail=Bad-Code', 'PO-123', ' sandbox:delay=5'])(
    'treats %j as an ordinary reference',
    (ref) => {
      expect(sandboxDirective(ref)).toBeUndefined();
    },
  );
});
