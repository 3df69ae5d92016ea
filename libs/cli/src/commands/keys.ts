/**
 * `sf keys new --role <verifier|operator> --out <file> [--kid <id>]`: a signing key for a
 * deployment. The private JWK is written to `--out` (created, never overwritten, 0600); the
 * public JWK is printed, for the trusted-keys set of every service (SF_TRUSTED_KEYS_FILE).
 */
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { SIGNER_ROLES, type SignerRole } from '@stageflow/domain';
import { generateSigningJwk, publicJwk } from '@stageflow/runtime';
import { UsageError, type Output } from '../output';

export function registerKeys(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('keys')
    .description('signing keys for verdicts and operator decisions')
    .command('new')
    .description('make an ed25519 signing key: the private JWK to --out (0600), the public JWK to stdout')
    .requiredOption('--role <role>', `${SIGNER_ROLES.join(' | ')}`)
    .requiredOption('--out <file>', 'where the private key is written (must not exist)')
    .option('--kid <id>', 'key id (default: <role>-<digest of the public key>)')
    .action((flags: { role: string; out: string; kid?: string }) => {
      if (!SIGNER_ROLES.includes(flags.role as SignerRole)) throw new UsageError(`--role must be one of ${SIGNER_ROLES.join(', ')}`);
      const jwk = generateSigningJwk(flags.role as SignerRole, flags.kid);
      try {
        fs.writeFileSync(flags.out, `${JSON.stringify(jwk, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      } catch (err) {
        throw new UsageError(`cannot write ${flags.out}: ${(err as Error).message}`);
      }
      out.out(JSON.stringify(publicJwk(jwk), null, 2));
      setExit(0);
    });
}
