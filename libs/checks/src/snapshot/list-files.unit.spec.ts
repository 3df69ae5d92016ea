import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listSnapshotFiles } from './list-files';

const git = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
const lsFiles = (dir: string) => git(dir, 'ls-files', '-z', '-c', '-o', '--exclude-standard').split('\0').filter(Boolean).sort();

function repo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-list-'));
  git(dir, 'init', '-q');
  fs.mkdirSync(path.join(dir, 'src/deep'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'README.md'), 'r');
  fs.writeFileSync(path.join(dir, 'src/a.ts'), 'a');
  fs.writeFileSync(path.join(dir, 'src/deep/b.ts'), 'b');
  fs.symlinkSync('a.ts', path.join(dir, 'src/link'));
  git(dir, 'add', '.');
  git(dir, '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'seed');
  fs.writeFileSync(path.join(dir, 'untracked.txt'), 'u');
  return dir;
}

describe('listSnapshotFiles in a git working tree', () => {
  it('lists what git ls-files lists when the tree has no ignore rules (walked in-process)', async () => {
    const dir = repo();
    expect((await listSnapshotFiles(dir)).sort()).toEqual(lsFiles(dir));
  });

  it('follows git when a .gitignore exists anywhere', async () => {
    const dir = repo();
    fs.writeFileSync(path.join(dir, 'src/.gitignore'), '*.log\n');
    fs.writeFileSync(path.join(dir, 'src/noise.log'), 'n');
    const listed = (await listSnapshotFiles(dir)).sort();
    expect(listed).toEqual(lsFiles(dir));
    expect(listed).not.toContain('src/noise.log');
  });

  it('follows git when .git/info/exclude has rules', async () => {
    const dir = repo();
    fs.appendFileSync(path.join(dir, '.git/info/exclude'), 'untracked.txt\n');
    const listed = (await listSnapshotFiles(dir)).sort();
    expect(listed).toEqual(lsFiles(dir));
    expect(listed).not.toContain('untracked.txt');
  });
});

describe('listSnapshotFiles never lists the state or work directories', () => {
  function withState(dir: string): void {
    fs.mkdirSync(path.join(dir, '.stageflow/runs/r1/checkout/.git'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.stageflow/events.db'), 'log');
    fs.writeFileSync(path.join(dir, '.stageflow/runs/r1/checkout/.git/HEAD'), 'ref');
    fs.mkdirSync(path.join(dir, 'sub/.stageflow'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sub/.stageflow/key'), 'k');
    fs.mkdirSync(path.join(dir, 'state-home/keys'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'state-home/keys/verifier.key'), 'secret');
    fs.mkdirSync(path.join(dir, 'scratch'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'scratch/cache'), 'c');
  }
  const exclude = (dir: string) => [path.join(dir, 'state-home'), path.join(dir, 'scratch'), '/elsewhere/entirely'];
  const stateless = (paths: string[]) => paths.filter((p) => !p.includes('.stageflow/') && !p.startsWith('state-home/') && !p.startsWith('scratch/'));

  it('in a working tree walked in-process', async () => {
    const dir = repo();
    withState(dir);
    const listed = (await listSnapshotFiles(dir, { exclude: exclude(dir) })).sort();
    expect(listed).toEqual(['README.md', 'src/a.ts', 'src/deep/b.ts', 'src/link', 'untracked.txt']);
  });

  it('in a working tree listed by git, even when the state directory is tracked', async () => {
    const dir = repo();
    withState(dir);
    fs.writeFileSync(path.join(dir, '.gitignore'), '*.log\n');
    git(dir, 'add', '-f', '.stageflow/events.db', 'state-home/keys/verifier.key');
    const listed = (await listSnapshotFiles(dir, { exclude: exclude(dir) })).sort();
    expect(listed).toEqual(stateless(lsFiles(dir)));
    expect(listed).toEqual(['.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts', 'src/link', 'untracked.txt']);
  });

  it('in a plain directory', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-list-plain-'));
    fs.writeFileSync(path.join(dir, 'report.md'), 'r');
    fs.writeFileSync(path.join(dir, '.stageflow'), 'a file of that name is ordinary content');
    withState(path.join(dir, 'nested'));
    const listed = (await listSnapshotFiles(dir, { ignoreGit: true, exclude: exclude(path.join(dir, 'nested')) })).sort();
    expect(listed).toEqual(['.stageflow', 'report.md']);
  });
});
