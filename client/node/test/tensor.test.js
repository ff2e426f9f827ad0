'use strict';
const assert = require('node:assert/strict');
const test = require('node:test');

const {
  fromProto, float16ToNumber, bfloat16ToNumber, toFloat32Array,
} = require('../src/tensor');
const { specToProto } = require('../src/spec');

test('float32 tensors decode little-endian, aligned or not', () => {
  const bytes = Buffer.from([0xff, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).subarray(1);
  const t = fromProto({ dtype: 'DTYPE_FLOAT32', shape: [1, 2], data: bytes });
  assert.equal(t.dtype, 'float32');
  assert.deepEqual(t.shape, [1, 2]);
  assert.deepEqual(Array.from(t.data), [1, -2]);
});

test('a size that does not match the shape is rejected', () => {
  assert.throws(() => fromProto(
      { dtype: 'DTYPE_FLOAT64', shape: [2], data: Buffer.alloc(8) }), /needs 16 bytes/);
});

test('half types decode exactly', () => {
  assert.equal(float16ToNumber(0x3c00), 1);
  assert.equal(float16ToNumber(0x0001), 2 ** -24);
  assert.equal(float16ToNumber(0xc000), -2);
  assert.equal(bfloat16ToNumber(0x3f80), 1);
  assert.equal(bfloat16ToNumber(0xbf40), -0.75);
});

test('toFloat32Array: every 16-bit value exactly, float32 as is', () => {
  const bits = Uint16Array.from({ length: 65536 }, (_, k) => k);
  for (const [dtype, one] of [['bfloat16', bfloat16ToNumber],
                              ['float16', float16ToNumber]]) {
    const got = toFloat32Array({ dtype, data: bits });
    assert.ok(got instanceof Float32Array);
    for (let k = 0; k < 65536; k++) {
      // Object.is: -0 and NaN too.
      if (!Object.is(got[k], Math.fround(one(k)))) {
        assert.fail(`${dtype} ${k.toString(16)}: ${got[k]} != ${one(k)}`);
      }
    }
  }
  assert.equal(toFloat32Array({ dtype: 'bfloat16', data: Uint16Array.of(0xbf40) })[0], -0.75);
  const f32 = Float32Array.of(1.5);
  assert.equal(toFloat32Array({ dtype: 'float32', data: f32 }), f32);
  assert.throws(() => toFloat32Array({ dtype: 'float64', data: Float64Array.of(1) }),
    TypeError);
});

test('specs default like the server and reject unknown names', () => {
  assert.deepEqual(specToProto({ d: 4, maxLen: 8 }), {
    d: 4, base: 0, maxLen: 8, dtype: 'DTYPE_FLOAT32',
    layout: 'LAYOUT_INTERLEAVED', frequency: 'FREQUENCY_PAPER' });
  assert.throws(() => specToProto({ d: 4, maxLen: 8, dtype: 'int8' }), TypeError);
});
