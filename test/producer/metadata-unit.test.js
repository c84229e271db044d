'use strict';
// The producer's table of topics (build/producer/place/metadata.js) without a cluster: it keeps
// maxEntries topics (DynamicProducer: 16 × maxTopics, at least 1,024); the next one makes it
// forget the least recently used quarter at once (one sort per quarter instead of a scan per
// new topic).
const t = require('tap');
const { Metadata } = require('../../build/producer/place/metadata');

function table(maxEntries) {
  const asked = [];
  const client = { getMetadata: (options, cb) => { asked.push(options.topic); cb(null, { topics: [] }); } };
  const m = new Metadata({ client, connected: () => false, error: () => {}, refreshMs: 30000, maxTopics: 0, maxEntries, maxPartitions: 1024 });
  return { m, asked };
}

t.test('beyond maxEntries the least recently used quarter goes, in one step', async (t) => {
  const { m } = table(8);
  for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) m.entry(name);
  m.entry('a'); // a becomes the most recent: b and c are now the least recently used
  t.equal(m.topics.size, 8);
  m.entry('i');
  t.same([...m.topics.keys()].sort(), ['a', 'd', 'e', 'f', 'g', 'h', 'i'], 'b and c (a quarter of 8) forgotten, i added');
  m.entry('j');
  t.equal(m.topics.size, 8, 'room for one more without forgetting');
  m.entry('k');
  t.same([...m.topics.keys()].sort(), ['a', 'f', 'g', 'h', 'i', 'j', 'k'], 'd and e forgotten next');
});

t.test('cycling through more topics than the table: 16 forgotten at a time, not one per message', async (t) => {
  const { m } = table(64);
  let made = 0;
  let forgets = 0;
  let wrongStep = 0;
  for (let pass = 0; pass < 10; pass++) {
    for (let i = 0; i < 80; i++) {
      const before = m.topics.size;
      const had = m.topics.has(`t${i}`);
      m.entry(`t${i}`);
      if (had) continue;
      made++;
      if (m.topics.size < before + 1) {
        forgets++;
        if (before !== 64 || m.topics.size !== 64 - 16 + 1) wrongStep++;
      }
    }
  }
  t.equal(wrongStep, 0, 'a full table (64) forgets 16 and takes the new topic: 49');
  t.equal(forgets, Math.ceil((made - 64) / 16), `one forgetting per 16 topics made beyond the first 64 (${made} made)`);
});

t.test('cycling through fewer topics than the table: each entry made once', async (t) => {
  const { m, asked } = table(64);
  for (let pass = 0; pass < 10; pass++) for (let i = 0; i < 60; i++) m.entry(`t${i}`);
  t.equal(m.topics.size, 60);
  t.equal(asked.length, 0, 'not connected: no metadata request');
});
