'use strict';
// Helpers of the client's tests. No tests of its own: `node --test
// test/` loads it and finds none.
const assert = require('node:assert/strict');
const fs = require('node:fs');

const { PosencError } = require('../src/index');

// A fresh directory under /dev/shm, removed when the test ends.
function shmTempDir(t) {
  const dir = fs.mkdtempSync('/dev/shm/posenc-node-test-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// 'OK', or the PosencError's code name and details.
async function codeOf(promise) {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    assert.ok(error instanceof PosencError, String(error));
    return `${error.codeName} ${error.details}`;
  }
}

module.exports = { shmTempDir, codeOf };
