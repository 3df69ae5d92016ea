/**
 * The canary setting shared by the sandbox e2e specs: secret-looking values for a service's
 * environment and files, a project that carries e2e/fixtures/sandbox/probe.sh, and the pipeline
 * and script agent generated from the fixture templates with the paths the probe must try.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canaryValue } from './canaries';
import { ROOT } from './sf-process';

export const SANDBOX_FIXTURES = path.join(ROOT, 'e2e/fixtures/sandbox');

/** Environment canaries: SF_API_TOKENS holds one `name:scopes:token` entry, SF_WEBHOOK_URL (an SF_* variable) a URL with a password. */
export interface EnvCanaries {
  readonly values: Readonly<Record<string, string>>;
  readonly env: NodeJS.ProcessEnv;
}

export function envCanaries(extra: Readonly<Record<string, (value: string) => string>> = {}): EnvCanaries {
  const values: Record<string, string> = {
    OPENAI_API_KEY: canaryValue('sk-proj-'),
    ANTHROPIC_API_KEY: canaryValue('sk-ant-api03-'),
    SF_API_TOKENS: canaryValue('sfapi_'),
    NATS_PASSWORD: canaryValue('natspw_'),
    PGPASSWORD: canaryValue('pgpw_'),
    SF_WEBHOOK_URL: canaryValue('hookpw_'),
  };
  const env: NodeJS.ProcessEnv = {
    ...values,
    SF_API_TOKENS: `deploy-bot:read+operate:${values.SF_API_TOKENS}`,
    SF_WEBHOOK_URL: `https://deploy:${values.SF_WEBHOOK_URL}@hooks.example.invalid/notify`,
  };
  for (const [name, wrap] of Object.entries(extra)) {
    values[name] = canaryValue(`${name.toLowerCase().replace(/[^a-z]/g, '')}_`);
    env[name] = wrap(values[name]!);
  }
  return { values, env };
}

/** Writes a credential-looking file holding a fresh canary; returns the canary. */
export function plantFile(file: string, line: (value: string) => string): string {
  const value = canaryValue('file_');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${line(value)}\n`, { mode: 0o600 });
  return value;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'pipe' });

/**
 * A git project with probe.sh, probe-agent.sh and a file the agent may legitimately read holding
 * `control` (the positive control: it must reach every place the probe publishes to).
 */
export function probeProject(dir: string, control: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet');
  for (const file of ['probe.sh', 'probe-agent.sh']) fs.copyFileSync(path.join(SANDBOX_FIXTURES, file), path.join(dir, file));
  fs.writeFileSync(path.join(dir, 'visible-config.txt'), `control_api_key=${control}\n`);
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'probe project');
}

/** Paths as single-quoted shell words. */
export const shellWords = (paths: readonly string[]): string => paths.map((p) => `'${p}'`).join(' ');

/** A fixture template with each `{{NAME}}` replaced by `values[NAME]`, written into `dir`; returns its path. */
export function fromTemplate(template: string, dir: string, values: Readonly<Record<string, string>>): string {
  const file = path.join(dir, path.basename(template));
  let text = fs.readFileSync(path.join(SANDBOX_FIXTURES, template), 'utf8');
  for (const [name, value] of Object.entries(values)) text = text.split(`{{${name}}}`).join(value);
  fs.writeFileSync(file, text);
  return file;
}

/** The sections of a probe report (`== name ==` headings), by name. */
export function reportSections(report: string): Record<string, string> {
  const sections: Record<string, string> = {};
  let current: string | undefined;
  for (const line of report.split('\n')) {
    const heading = /^== (.+) ==$/.exec(line);
    if (heading) current = heading[1]!;
    else if (current !== undefined) sections[current] = `${sections[current] ?? ''}${line}\n`;
  }
  return sections;
}
