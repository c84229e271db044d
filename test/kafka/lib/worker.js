'use strict';
// The child-process side of the broker suite's workers (producer and consumer processes
// forked by the tests): wait for the parent's { type: 'start', ... }, run, then disconnect.

/**
 * When `mod` is the process's main module and it was forked with an IPC channel: runs
 * `run(startMessage)` on the parent's 'start' message, then disconnects. If `run` rejects, the
 * parent gets `failed(stack)` instead of the worker's own 'done' message, so that it never
 * waits for a worker that died of an error.
 */
function serveWorker(mod, run, failed) {
  if (require.main !== mod || !process.send) return;
  process.once('message', (m) => {
    if (m.type !== 'start') return;
    run(m).then(
      () => process.disconnect(),
      (err) => {
        process.send(failed(String(err && err.stack)));
        process.disconnect();
      },
    );
  });
}

module.exports = { serveWorker };
