'use strict';
// A real posenc_server (POSENC_SERVER) for the client's tests. No tests of
// its own: `node --test test/` loads it and finds none.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// posenc_server on 127.0.0.1:0, with flags added; resolves
// { target, logPath, stop }.
async function startServer(flags = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'posenc-node-'));
  const logPath = path.join(dir, 'server.log');
  const log = fs.openSync(logPath, 'w');
  const child = spawn(process.env.POSENC_SERVER,
    ['--listen=127.0.0.1:0', '--lame_duck_seconds=0', '--grace_seconds=1',
      ...flags],
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
    if (match) return { target: `127.0.0.1:${match[1]}`, logPath, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const text = fs.readFileSync(logPath, 'utf8');
  await stop();
  throw new Error(`server did not start:\n${text}`);
}

module.exports = { startServer };
