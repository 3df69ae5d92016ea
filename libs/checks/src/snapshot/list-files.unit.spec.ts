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
