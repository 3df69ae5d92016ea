#!/usr/bin/env node
// Transpiles every workspace's src/ to dist/ with swc (no type-check; `npm run typecheck` does that).
// Nx runs the same per package (`npx nx run-many -t build`, cached by nx.json).
// Spec files are not shipped. Runs on `npm ci` through the root `prepare` script.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '..');
const swcrc = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));
delete swcrc.$schema;

function* sources(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(full);
    else if (/\.ts$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) yield full;
  }
}

async function buildPackage(pkgDir) {
  const src = path.join(pkgDir, 'src');
  const dist = path.join(pkgDir, 'dist');
  if (!fs.existsSync(src)) return 0;
  fs.rmSync(dist, { recursive: true, force: true });
  let count = 0;
  for (const file of sources(src)) {
    const rel = path.relative(src, file);
    const out = path.join(dist, rel.replace(/\.ts$/, '.js'));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const result = await swc.transformFile(file, { ...swcrc, filename: file, sourceFileName: path.relative(path.dirname(out), file), swcrc: false });
    fs.writeFileSync(out, result.code + `\n//# sourceMappingURL=${path.basename(out)}.map`);
    if (result.map) fs.writeFileSync(out + '.map', result.map);
    count++;
  }
  // Non-TypeScript assets (JSON schemas, SQL) ship beside the code.
  copyAssets(src, dist);
  return count;
}

function copyAssets(src, dist) {
  for (const entry of fs.readdirSync(src, { withFileTypes: true })) {
    const from = path.join(src, entry.name);
    const to = path.join(dist, entry.name);
    if (entry.isDirectory()) copyAssets(from, to);
    else if (/\.(json|sql|yaml)$/.test(entry.name)) {
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}

async function main() {
  const started = Date.now();
  let files = 0;
  // `node scripts/build.js <package dir>...` builds only those (what each package's `build` target runs).
  const only = process.argv.slice(2).map((dir) => path.resolve(dir));
  if (only.length) {
    for (const dir of only) files += await buildPackage(dir);
    process.stderr.write(`built ${files} files in ${Date.now() - started} ms\n`);
    return;
  }
  for (const group of ['libs', 'services']) {
    for (const name of fs.readdirSync(path.join(root, group))) {
      files += await buildPackage(path.join(root, group, name));
    }
  }
  files += await buildPackage(path.join(root, 'proto'));
  process.stderr.write(`built ${files} files in ${Date.now() - started} ms\n`);
}

main().catch((err) => {
  process.stderr.write(`build failed: ${err.stack || err}\n`);
  process.exit(1);
});
