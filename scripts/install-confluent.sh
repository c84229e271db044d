#!/usr/bin/env bash
# Installs Confluent's client (@confluentinc/kafka-javascript, an optional peer dependency that
# `npm install` does not add) into this clone, for the tests that drive it (test/kafkajs/confluent/ and
# the README's example; they are skipped without it). npm does not add a package the project
# names as an optional peer to the project's own tree, so it goes into a prefix of its own
# inside node_modules (cleared by the next npm ci), linked where require() finds it.
# Offline, its build needs CKJS_LINKING=dynamic (set here) and the OpenSSL and zlib development
# files (Debian: libssl-dev, zlib1g-dev).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VERSION="${CONFLUENT_VERSION:-1.10.1}"
export CKJS_LINKING=dynamic
prefix=node_modules/.confluent
mkdir -p "${prefix}"
npm install --prefix "${prefix}" --no-save --no-package-lock --no-progress --no-audit --no-fund \
  "@confluentinc/kafka-javascript@${VERSION}"
ln -sfn .confluent/node_modules/@confluentinc node_modules/@confluentinc
node -e "console.log('@confluentinc/kafka-javascript ' + require('@confluentinc/kafka-javascript/package.json').version + ', librdkafka ' + require('@confluentinc/kafka-javascript').librdkafkaVersion)"
