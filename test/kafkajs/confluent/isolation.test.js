'use strict';
// An application that uses only Confluent's client never loads node-rdkafka: the package's
// index loads no client, and DynamicProducer, DynamicConsumer and LagMonitor given
// options.kafka use that one. Checked in a child process (its require.cache), so that this
// process's modules do not count. Loading both clients in one process is warned about once.
// The cases are in cases/isolation.js: they run when Confluent's client is installed (an optional
// peer dependency `npm install` does not add), and are skipped, saying how to install it, when not.
const t = require('tap');
const { confluentInstalled, CONFLUENT_MISSING } = require('../../lib/clients');

if (confluentInstalled()) require('./cases/isolation');
else t.plan(0, CONFLUENT_MISSING);
