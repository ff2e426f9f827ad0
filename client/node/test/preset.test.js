'use strict';
// resolvePreset against a real server (POSENC_SERVER=<posenc_server binary>;
// skipped when unset): a library call's spec gives the same rows as the
// hand-written spec; a model's config.json picks its preset; refusals name
// the argument.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');

const { PosencClient, PosencError } = require('../src/index');
const { startServer } = require('./server_process');

const MODELS = path.resolve(__dirname, '..', '..', '..', 'tests', 'testdata',
  'models');

test('presets against a real server', { skip: !process.env.POSENC_SERVER },
  async (t) => {
    const server = await startServer();
    const client = new PosencClient(server.target, { timeoutMs: 30000 });
    try {
      await t.test('a diffusers call gives the hand-written spec\'s rows',
        async () => {
          const p = await client.resolvePreset(
            'diffusers.get_timestep_embedding',
            { embedding_dim: 321, flip_sin_to_cos: true,
              downscale_freq_shift: 0 }, { dtype: 'bfloat16' });
          assert.equal(p.kind, 'encoding');
          assert.equal(p.name, 'diffusers.get_timestep_embedding');
          assert.match(p.reproduces, /diffusers/);
          const t = [999.5, 0.25, 0];
          const got = await client.encode(p.spec, t);
          const want = await client.encode({ dim: 321, padOddDim: true,
            layout: 'concat_cos_sin', dtype: 'bfloat16' }, t);
          assert.deepEqual(got.shape, [3, 321]);
          assert.ok(got.bytes.equals(want.bytes));
        });

      await t.test('a grid preset is a cached table', async () => {
        const p = await client.resolvePreset('mae.get_2d_sincos_pos_embed',
          { embed_dim: 64, grid_size: 14, cls_token: true });
        assert.equal(p.kind, 'table');
        const table = await client.table(p.spec);
        assert.deepEqual(table.shape, [197, 64]);
        assert.ok(table.data.slice(0, 64).every((v) => v === 0));  // cls row
      });

      await t.test('a config.json picks its preset', async () => {
        const p = await client.resolvePreset('', {}, { configJson:
          fs.readFileSync(path.join(MODELS, 'qwen2_vl_7b_config.json'), 'utf8') });
        assert.equal(p.name, 'qwen2_vl.mrope');
        const rows = await client.encode(p.spec, [1000, 1000, 1000]);
        assert.deepEqual(rows.shape, [1, 256]);
      });

      await t.test('an unknown argument is INVALID_ARGUMENT naming it',
        async () => {
          await assert.rejects(
            client.resolvePreset('flux.timestep_embedding', { dim: 256, dims: 3 }),
            (error) => error instanceof PosencError &&
              error.codeName === 'INVALID_ARGUMENT' &&
              /arguments\.dims/.test(error.details));
        });
    } finally {
      client.close();
      await server.stop();
    }
  });
