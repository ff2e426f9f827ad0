'use strict';
// resolvePreset against a real server (POSENC_SERVER=<posenc_server binary>;
// skipped when unset): a library call's spec gives the same rows as the
// hand-written spec; a model's config.json picks its preset; refusals name
// the argument.
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { PosencClient, PosencError } = require('../src/index');

const MODELS = path.resolve(__dirname, '..', '..', '..', 'tests', 'testdata',
  'models');

async function startServer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'posenc-node-'));
  const logPath = path.join(dir, 'server.log');
  const log = fs.openSync(logPath, 'w');
  const child = spawn(process.env.POSENC_SERVER,
    ['--listen=127.0.0.1:0', '--lame_duck_seconds=0', '--grace_seconds=1'],
    { stdio: ['ignore', log, log] });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    fs.closeSync(log);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline && child.exitCode === null) {
    const match = /listening on \S+ \(port (\d+)\)/.exec(
      fs.readFileSync(logPath, 'utf8'));
    if (match) return { target: `127.0.0.1:${match[1]}`, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const text = fs.readFileSync(logPath, 'utf8');
  await stop();
  throw new Error(`server did not start:\n${text}`);
}

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
