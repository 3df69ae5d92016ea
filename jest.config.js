// Test tiers are named by file suffix: *.unit.spec.ts (no servers), *.int.spec.ts (real NATS /
// Postgres), *.e2e.spec.ts (whole services as processes). `npm test` runs all three.
const fs = require('node:fs');
const path = require('node:path');
const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;

const moduleNameMapper = { "^@stageflow/proto$": "<rootDir>/proto/src" };
for (const group of ['libs', 'services']) {
  for (const name of fs.readdirSync(path.join(__dirname, group))) {
    moduleNameMapper[`^@stageflow/${name}$`] = `<rootDir>/${group}/${name}/src`;
  }
}

const common = {
  rootDir: __dirname,
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, sourceMaps: 'inline', swcrc: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  setupFiles: ['reflect-metadata', '<rootDir>/scripts/jest-env.js'],
};

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/**/*.unit.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/**/*.int.spec.ts'], globalSetup: '<rootDir>/scripts/jest-services.js', globalTeardown: '<rootDir>/scripts/jest-services-teardown.js' },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/**/*.e2e.spec.ts'], globalSetup: '<rootDir>/scripts/jest-services.js', globalTeardown: '<rootDir>/scripts/jest-services-teardown.js' },
  ],
};
