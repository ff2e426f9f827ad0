'use strict';
// Encode: EncodingSpec to the proto, and rows of real-valued points from a
// real server (POSENC_SERVER=<posenc_server binary>; skipped when unset).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const test = require('node:test');

const { PosencClient, encodingWidth } = require('../src/index');
const { startServer } = require('./server_process');
const { codeOf } = require('./helpers');
const { encodingSpecToProto } = require('../src/spec');

const NERF = { frequency: 'octaves', layout: 'concat_sin_cos',
  numFrequencies: 10, minFreqExp: 0, maxFreqExp: 8, coordinates: 3,
  includeInput: true };

test('encodingSpecToProto: proto names, unset fields as the proto defaults', () => {
  assert.deepEqual(encodingSpecToProto({ dim: 8 }), {
    dim: 8, dtype: 'DTYPE_FLOAT32', layout: 'LAYOUT_INTERLEAVED',
    frequency: 'FREQUENCY_SCHEME_EXPONENTIAL', maxPeriod: 0, shift: 0,
    scale: 0, padOddDim: false, numFrequencies: 0, minFreqExp: 0,
    maxFreqExp: 0, coordinates: 0, includeInput: false, axesDim: [],
    mropeSection: [], mropeInterleaved: false });
  const qwen3 = encodingSpecToProto({ dim: 128, mropeSection: [24, 20, 20],
    mropeInterleaved: true, layout: 'rotate_half' });
  assert.deepEqual([qwen3.mropeSection, qwen3.mropeInterleaved, qwen3.layout],
    [[24, 20, 20], true, 'LAYOUT_ROTATE_HALF']);
  const nerf = encodingSpecToProto(NERF);
  assert.equal(nerf.frequency, 'FREQUENCY_SCHEME_OCTAVES');
  assert.equal(nerf.layout, 'LAYOUT_CONCAT_SIN_COS');
  assert.deepEqual([nerf.numFrequencies, nerf.maxFreqExp, nerf.coordinates,
    nerf.includeInput], [10, 8, 3, true]);
  const sd = encodingSpecToProto({ dim: 321, padOddDim: true, scale: 1000,
    maxPeriod: 500.5, shift: 1, dtype: 'float16', layout: 'concat_cos_sin' });
  assert.deepEqual([sd.dim, sd.padOddDim, sd.scale, sd.maxPeriod, sd.shift,
    sd.dtype], [321, true, 1000, 500.5, 1, 'DTYPE_FLOAT16']);
  assert.throws(() => encodingSpecToProto({ dim: 8, frequency: 'paper' }),
    /frequency must be one of exponential, octaves/);
});

test('encodingWidth', () => {
  assert.equal(encodingWidth({ dim: 256 }), 256);
  assert.equal(encodingWidth({ dim: 321, padOddDim: true }), 321);
  assert.equal(encodingWidth(NERF), 63);
  assert.equal(encodingWidth({ dim: 8, coordinates: 2 }), 16);
  assert.equal(encodingWidth({ axesDim: [16, 56, 56],
    layout: 'rotation_matrix' }), 256);
  assert.equal(encodingWidth({ dim: 128, mropeSection: [16, 24, 24] }), 128);
});

test('a client sends the routing key on table calls only', () => {
  const client = new PosencClient('127.0.0.1:1');
  try {
    const spec = { spec: { d: 4, maxLen: 8 } };
    assert.equal(client.metadata('getRows', spec).get('x-posenc-table').length, 1);
    assert.deepEqual(client.metadata('encode', { spec: encodingSpecToProto({ dim: 4 }) })
      .get('x-posenc-table'), []);
  } finally {
    client.close();
  }
});

test('encode against a real server', { skip: !process.env.POSENC_SERVER },
  async (t) => {
    const server = await startServer();
    const client = new PosencClient(server.target, { timeoutMs: 30000 });
    try {
      await t.test('integer points are the tables\' rows', async () => {
        // shift 0 is FREQUENCY_PAPER's table, shift 1 FREQUENCY_T2T's.
        const positions = [7, 0, 999, 3, 7];
        for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
          for (const [shift, frequency] of [[0, 'paper'], [1, 't2t']]) {
            const got = await client.encode(
              { dim: 64, dtype, shift, layout: 'concat_cos_sin' }, positions);
            const want = await client.gather(
              { d: 64, maxLen: 1000, dtype, layout: 'concat_cos_sin', frequency },
              positions);
            assert.equal(got.dtype, dtype);
            assert.deepEqual(got.shape, [5, 64]);
            assert.ok(got.bytes.equals(want.bytes), `${dtype} shift ${shift}`);
          }
        }
      });

      await t.test('FLUX grid equals the same ids as tuples', async () => {
        const flux = { axesDim: [16, 56, 56], layout: 'rotation_matrix' };
        const byGrid = await client.encodeGrid(flux, [0, [2, 3], [0, 4]]);
        const ids = [];
        for (let h = 2; h < 5; ++h) {
          for (let w = 0; w < 4; ++w) ids.push([0, h, w]);
        }
        const byTuples = await client.encode(flux, ids);
        assert.deepEqual(byGrid.shape, [12, 64, 2, 2]);
        assert.ok(byGrid.bytes.equals(byTuples.bytes));
      });

      await t.test('NeRF points, flat or as points', async () => {
        const points = [[0.5, -0.25, 0.1], [0.3, 1, -0.75]];
        const rows = await client.encode(NERF, points);
        assert.deepEqual(rows.shape, [2, 63]);
        const flat = await client.encode(NERF, new Float64Array(points.flat()));
        assert.ok(flat.bytes.equals(rows.bytes));
        const v = rows.data;
        // x = 0.5 at 2 pi 2^0: angle pi, sin exactly +0, cos -1; x = 1
        // (point 1, coordinate 1: pair 10) a whole turn, sin +0, cos 1.
        assert.ok(Object.is(v[0], 0), `sin pi = ${v[0]}`);
        assert.equal(v[30], -1);
        assert.ok(Object.is(v[63 + 10], 0), `sin 2 pi = ${v[63 + 10]}`);
        assert.equal(v[63 + 40], 1);
        for (let p = 0; p < 2; p++) {
          for (let k = 0; k < 3; k++) {
            assert.equal(v[63 * p + 60 + k], Math.fround(points[p][k]));
          }
        }
      });

      await t.test('errors name the field', async () => {
        assert.match(await codeOf(client.encode({ dim: 5 }, [1])),
          /^INVALID_ARGUMENT .*spec\.dim/);
        assert.match(await codeOf(client.encode({ dim: 256, scale: 1000 },
          [0, 17000])), /^OUT_OF_RANGE .*positions\[1\]/);
        assert.match(await codeOf(client.encode(NERF, [0.5, 0.25])),
          /^INVALID_ARGUMENT .*positions/);
      });

      await t.test('the server receives no routing key', async () => {
        // The server logs each failed call with the x-posenc-table it got.
        await codeOf(client.encode({ dim: 3 }, [1]));
        await codeOf(client.gather({ d: 4, maxLen: 8 }, [8]));
        const encodeRe = /\/posenc\.v1\.PositionalEncoding\/Encode -> .* x-posenc-table=(\S+)\n/g;
        const rowsRe = /\/posenc\.v1\.PositionalEncoding\/GetRows -> .* x-posenc-table=(\S+)\n/g;
        let log = '';
        for (const deadline = Date.now() + 10000; Date.now() < deadline;) {
          log = fs.readFileSync(server.logPath, 'utf8');
          if (/GetRows -> /.test(log) && /Encode -> /.test(log)) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const encodeKeys = [...log.matchAll(encodeRe)].map((m) => m[1]);
        assert.ok(encodeKeys.length > 0, log.slice(-2000));
        assert.deepEqual(new Set(encodeKeys), new Set(['(none)']));
        assert.ok([...log.matchAll(rowsRe)].map((m) => m[1]).includes(
          'd=4;base=10000;dtype=float32;layout=interleaved;freq=paper'));
      });
    } finally {
      client.close();
      await server.stop();
    }
  });
