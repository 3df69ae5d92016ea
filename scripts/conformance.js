#!/usr/bin/env node
// Conformance with the reference system: loads every fixture of its corpus (a folder holding
// `cases.json`, by default ../shared/peer/stageflow beside this clone) with the built catalog and
// compares verdicts, codes and messages. Not part of `npm test`: the corpus lives outside the
// repository. Exit 0 when every case matches, 1 when one does not, 2 when the corpus is absent.
// Prints `N passed, M failed` last. Usage: npm run conformance [-- <corpus dir>] [--json]
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const json = args.includes('--json');
const corpus = path.resolve(args.find((arg) => !arg.startsWith('--')) ?? process.env.SF_CONFORMANCE_CORPUS ?? path.join(__dirname, '..', '..', 'shared', 'peer', 'stageflow'));
const casesFile = path.join(corpus, 'cases.json');
if (!fs.existsSync(casesFile)) {
  console.error(`conformance: no corpus at ${corpus} (cases.json missing); pass its folder as the first argument`);
  process.exit(2);
}
const { loadPipeline, loadStageFile } = require('../libs/catalog/dist');

/** Every way one case can disagree with the reference, as sentences; empty when it conforms. */
function disagreements(relative, expected) {
  const file = path.join(corpus, relative);
  const load = (strict) => (expected.kind === 'stage' ? loadStageFile(file, { strict }) : loadPipeline(file, { strict, projectRoot: corpus }));
  const result = load(false);
  const all = [...result.errors, ...result.warnings];
  const reported = (expected.ok ? result.warnings : result.errors).map((issue) => issue.code);
  const problems = [];
  if (result.ok !== expected.ok) problems.push(`verdict ${result.ok ? 'valid' : 'invalid'}, expected ${expected.ok ? 'valid' : 'invalid'}: ${all.map((i) => `${i.code}: ${i.message}`).join('; ')}`);
  for (const code of expected.codes) if (!reported.includes(code)) problems.push(`code ${code} not reported`);
  for (const code of expected.absent_codes ?? []) if (all.some((issue) => issue.code === code)) problems.push(`code ${code} reported, expected absent`);
  const text = all.map((issue) => issue.message).join('\n');
  for (const message of expected.messages ?? []) {
    const found = expected.messages_are_regex === true ? new RegExp(message).test(text) : text.toLowerCase().includes(message.toLowerCase());
    if (!found) problems.push(`message ${JSON.stringify(message)} not found`);
  }
  if (expected.stage_id !== undefined && !result.errors.some((issue) => issue.code === 'pipeline.route_if_invalid' && issue.stage_id === expected.stage_id)) {
    problems.push(`route_if_invalid not attributed to stage ${expected.stage_id}`);
  }
  for (const issue of all) if (!path.isAbsolute(issue.file)) problems.push(`issue ${issue.code} names a relative file ${issue.file}`);
  if (expected.ok && !load(true).ok) problems.push('invalid under --strict');
  return problems;
}

const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
const results = Object.entries(cases).map(([relative, expected]) => ({ case: relative, problems: disagreements(relative, expected) }));
const failed = results.filter((result) => result.problems.length > 0);
if (json) console.log(JSON.stringify({ corpus, results }, null, 2));
else for (const result of failed) console.log(`✘ ${result.case}\n  ${result.problems.join('\n  ')}`);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length ? 1 : 0);
