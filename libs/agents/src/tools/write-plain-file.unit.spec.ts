/** The write tools against real hard links, FIFOs, sockets and devices: refused, nothing elsewhere touched, nothing blocks. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { artifactsDir, writeArtifact, type AttemptDirs } from './artifacts';
import { CheckoutFs } from './checkout-fs';
import { ToolRefusal } from './result';

const ORIGINAL = 'outside the attempt\n';
let root: string;
let outside: string;
let dirs: AttemptDirs;
let artifacts: string;
let checkout: string;
let server: net.Server;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-write-plain-'));
  outside = path.join(root, 'outside.txt');
  dirs = { runDir: path.join(root, 'run'), stageId: 's', attempt: 1 };
  artifacts = artifactsDir(dirs);
  checkout = path.join(root, 'checkout');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.mkdirSync(checkout);
  for (const dir of [artifacts, checkout]) {
    execFileSync('mkfifo', [path.join(dir, 'pipe.md')]);
    execFileSync('mknod', [path.join(dir, 'null.md'), 'c', '1', '3']);
    fs.writeFileSync(path.join(dir, 'plain.md'), 'old content that is longer\n');
  }
  server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(artifacts, 'sock.md'), resolve));
});

beforeEach(() => {
  fs.writeFileSync(outside, ORIGINAL); // one file, three names: outside, artifacts/alias.md, checkout/alias.md
  for (const dir of [artifacts, checkout]) {
    fs.rmSync(path.join(dir, 'alias.md'), { force: true });
    fs.linkSync(outside, path.join(dir, 'alias.md'));
  }
});

afterAll(() => {
  server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('write_stage_artifact onto an existing entry', () => {
  it.each([
    ['a hard link to a file elsewhere', 'alias.md', /alias\.md is a hard link \(3 links\)/],
    ['a FIFO (without blocking)', 'pipe.md', /pipe\.md is not a regular file/],
    ['a character device', 'null.md', /null\.md is not a regular file/],
    ['a socket', 'sock.md', /sock\.md is not a regular file/],
  ])('refuses %s and leaves the file it names as it was', async (_name, rel, reason) => {
    const refused = writeArtifact(dirs, rel, 'overwritten\n');
    await expect(refused).rejects.toBeInstanceOf(ToolRefusal);
    await expect(refused).rejects.toThrow(reason);
    expect(fs.readFileSync(outside, 'utf8')).toBe(ORIGINAL);
  });

  it('replaces the whole content of a plain file', async () => {
    await writeArtifact(dirs, 'plain.md', 'new\n');
    expect(fs.readFileSync(path.join(artifacts, 'plain.md'), 'utf8')).toBe('new\n');
  });
});

describe('write_file onto an existing checkout entry', () => {
  const files = () => new CheckoutFs(checkout);

  it.each([
    ['a hard link to a file elsewhere', 'alias.md', /alias\.md is a hard link \(3 links\)/],
    ['a FIFO (without blocking)', 'pipe.md', /pipe\.md is not a regular file/],
    ['a character device', 'null.md', /null\.md is not a regular file/],
  ])('refuses %s and leaves the file it names as it was', async (_name, rel, reason) => {
    await expect(files().writeFile(rel, 'overwritten\n')).rejects.toThrow(reason);
    expect(fs.readFileSync(outside, 'utf8')).toBe(ORIGINAL);
  });

  it.each([['pipe.md'], ['null.md']])('read_file refuses %s without blocking', async (rel) => {
    await expect(files().readFile(rel)).rejects.toThrow(`${rel} is not a file`);
  });

  it('replaces the whole content of a plain file', async () => {
    await files().writeFile('plain.md', 'new\n');
    expect(fs.readFileSync(path.join(checkout, 'plain.md'), 'utf8')).toBe('new\n');
  });
});
