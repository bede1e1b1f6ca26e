#!/usr/bin/env node
// The `credemu` command an npm install links: the binary findBinary finds (the package's own for this platform
// unless $CREDEMU names another), run with the same arguments; its exit status (or signal) is this command's.
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { CredemuError, findBinary } from '../credemu.mjs';

let binary;
try {
  // On PATH this command is itself `credemu` (node_modules/.bin/credemu): passed over.
  binary = findBinary(undefined, { skip: realpathSync(process.argv[1]) });
} catch (error) {
  if (!(error instanceof CredemuError)) throw error;
  process.stderr.write(`credemu: ${error.message}\n`);
  process.exit(127);
}
const done = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit' });
if (done.error) throw done.error;
if (done.signal) process.kill(process.pid, done.signal);
process.exit(done.status ?? 1);
