/**
 * User-mode networking for a sandbox that asked for it: slirp4netns attached to the sandbox's
 * own network namespace, with the host's loopback disabled (10.0.2.2 does not reach 127.0.0.1),
 * so the host's services on loopback stay unreachable. Cluster service ports on other addresses
 * must additionally be closed by a NetworkPolicy: this only provides the namespace and the NAT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

/** slirp4netns' built-in DNS forwarder inside the namespace. */
export const SANDBOX_RESOLV_CONF = 'nameserver 10.0.2.3\n';

const READY_TIMEOUT_MS = 10_000;

/** Reads bubblewrap's --info-fd JSON and returns the sandbox's child pid (a host pid). */
export function readChildPid(info: Readable): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) {
        info.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    info.on('data', onData);
    info.once('end', () => reject(new Error('bubblewrap ended before reporting its child pid')));
    info.once('error', reject);
  });
}

/**
 * Starts slirp4netns on `childPid`'s namespaces as this process (it must open /dev/net/tun), confined
 * by its own mount-namespace sandbox and seccomp filter; resolves once the tap device is configured.
 */
export function startSlirp(slirpPath: string, childPid: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const slirp = spawn(
      slirpPath,
      ['--configure', '--mtu=65520', '--disable-host-loopback', '--enable-sandbox', '--enable-seccomp', `--userns-path=/proc/${childPid}/ns/user`, '--ready-fd=3', String(childPid), 'tap0'],
      { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    slirp.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2000)));
    const timer = setTimeout(() => fail(new Error('slirp4netns did not become ready')), READY_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      slirp.kill('SIGKILL');
      reject(new Error(`${error.message}${stderr ? `: ${stderr.trim()}` : ''}`));
    };
    (slirp.stdio[3] as Readable).once('data', () => {
      clearTimeout(timer);
      resolve(slirp);
    });
    slirp.once('error', fail);
    slirp.once('exit', (code) => fail(new Error(`slirp4netns exited with ${code}`)));
  });
}
