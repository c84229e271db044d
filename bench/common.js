'use strict';
// What several benchmarks share: their command lines (kdp's parser, build/tools/args), the
// median of their rounds, and how a benchmark whose rows run in processes of their own starts.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { flagsOrExit, fileHeader } = require('../build/tools/args');

/**
 * The flags of the benchmark `file` (its __filename) as declared in `declared` (src/tools/args.ts:
 * type, default, help; numbers integer, min, max), every one present, numbers as numbers. --help
 * prints the first paragraph of the file's header comment and the flags, and exits 0; a bad
 * command line prints one line naming the flag and exits 2, before the benchmark does any work.
 * `usage`: how it is run (default `node bench/<file>`); `notes`: more text after the flags.
 */
function flags(file, declared, { usage, notes } = {}) {
  const name = `bench/${path.basename(file)}`;
  return flagsOrExit({ name, usage: usage ?? `node ${name}`, description: fileHeader(file), flags: declared, notes });
}

/** The median of `xs` (the upper one of an even count); NaN for none. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
}

/** Whether Confluent's client, a peer that is not a dependency, is installed (bash scripts/install-confluent.sh). */
function confluentInstalled() {
  try {
    require.resolve('@confluentinc/kafka-javascript');
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one row in this process (`childName`, the parent's --child=ROW: `child(childName)`) or the
 * whole benchmark (`main()`); either failing prints its error and exits 1.
 */
function start(childName, child, main) {
  (childName !== undefined ? child(childName) : main()).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

/** The CPU time (ns, user + system) of this process's children waited for so far (/proc/self/stat's cutime and cstime), or NaN. */
function childrenCpuNs() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ').pop().split(' ');
    // After the command's name: field 3 (state) is at 0, so cutime (16) and cstime (17) at 13 and 14, in ticks of 1/100 s.
    return (Number(fields[13]) + Number(fields[14])) * 1e7;
  } catch {
    return NaN;
  }
}

/**
 * The CPU time (ns, user + system) the processes `pids` have spent so far (/proc/PID/stat's
 * utime and stime): the brokers' of a cluster on this machine (--broker-pids). NaN for none, or
 * when one cannot be read.
 */
function processesCpuNs(pids) {
  if (pids.length === 0) return NaN;
  let sum = 0;
  for (const pid of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ');
      // utime (14) and stime (15) at 11 and 12.
      sum += (Number(fields[11]) + Number(fields[12])) * 1e7;
    } catch {
      return NaN;
    }
  }
  return sum;
}

/** --broker-pids: the flag as every benchmark that takes it declares it. */
const BROKER_PIDS_FLAG = {
  type: 'string', arg: 'PID[,PID]',
  help: 'with --brokers on this machine: its brokers\' processes, whose CPU per message each row then gives (scripts/kafka.sh\'s: $(cat .kafka/node*/pid | paste -sd, -))',
};

/** The pids of --broker-pids (`list`), as numbers; none without it. */
function brokerPids(list) {
  return list === undefined ? [] : list.split(',').map(Number).filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** spawnSync(`bin`, `argv`, `options`) and the CPU time the child spent (ns, to the 10 ms of the kernel's ticks): { run, cpuNs }. */
function spawnCounted(bin, argv, options) {
  const before = childrenCpuNs();
  const run = spawnSync(bin, argv, options);
  return { run, cpuNs: childrenCpuNs() - before };
}

module.exports = { flags, median, confluentInstalled, start, spawnCounted, processesCpuNs, brokerPids, BROKER_PIDS_FLAG };
