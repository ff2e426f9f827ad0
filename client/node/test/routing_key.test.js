'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { routingKey, ROUTING_KEY_HEADER } = require('../src/index');

test('routing key normalises defaults and ignores maxLen', () => {
  const want = 'd=512;base=10000;dtype=float32;layout=interleaved;freq=paper';
  assert.strictEqual(routingKey({ d: 512, maxLen: 100 }), want);
  assert.strictEqual(routingKey({
    d: 512, maxLen: 9999, base: 10000, dtype: 'float32',
    layout: 'interleaved', frequency: 'paper',
  }), want);
  assert.strictEqual(ROUTING_KEY_HEADER, 'x-posenc-table');
});

test('routing key names every other field, base as String(x)', () => {
  assert.strictEqual(
    routingKey({ d: 64, maxLen: 7, base: 500.5, dtype: 'bfloat16',
      layout: 'concat_cos_sin', frequency: 't2t' }),
    'd=64;base=500.5;dtype=bfloat16;layout=concat_cos_sin;freq=t2t');
  const cases = [[1e21, '1e+21'], [5e-324, '5e-324'], [0.1, '0.1'],
    [123456789012345680000, '123456789012345680000'], [1e-7, '1e-7'],
    [1e-6, '0.000001']];
  for (const [base, text] of cases) {
    assert.strictEqual(routingKey({ d: 8, maxLen: 1, base }),
      `d=8;base=${text};dtype=float32;layout=interleaved;freq=paper`);
  }
});
