'use strict';
/*
 * Scenarios by resource family, one file each (core.js holds setup and the
 * shared helpers). Each family file exports { scenarios } keyed by
 * operationId, then by status code; an operationId may appear in one file only.
 */
const fs = require('node:fs');
const core = require('./core');

const scenarios = { ...core.scenarios };
for (const file of fs.readdirSync(__dirname).sort()) {
  if (file === 'index.js' || file === 'core.js' || !file.endsWith('.js')) continue;
  const family = require(`./${file}`).scenarios;
  for (const [op, byStatus] of Object.entries(family)) {
    if (scenarios[op]) throw new Error(`scenario for ${op} defined twice (${file})`);
    scenarios[op] = byStatus;
  }
}

module.exports = { scenarios, setup: core.setup };
