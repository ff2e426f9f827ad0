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

test('routing key of a grid table: the proto example, defaults folded', () => {
  const axis = { size: 14, channels: 384 };
  assert.strictEqual(
    routingKey({ d: 768, layout: 'concat_sin_cos',
      grid: { axes: [axis, axis], channelOrder: [1, 0], extraZeroRows: 1 } }),
    'd=768;base=10000;dtype=float32;layout=concat_sin_cos;freq=paper;' +
    'grid=14:384:0:1/1,14:384:0:1/1;order=1,0;sin_cos=per_axis;extra=1');
  assert.strictEqual(
    routingKey({ d: 64, grid: { sinCos: 'grouped', axes: [
      { size: 4, channels: 32, positionNumerator: 16, positionDenominator: 48 },
      { size: 6, channels: 32 }] } }),
    'd=64;base=10000;dtype=float32;layout=interleaved;freq=paper;' +
    'grid=4:32:0:1/3,6:32:0:1/1;order=0,1;sin_cos=grouped;extra=0');
  assert.throws(() => routingKey({ d: 4, grid: { axes: [], sinCos: 'both' } }),
    /grid.sinCos/);
});
