/**
 * `sf setup`: creates or updates a namespace's streams, buckets and durable consumers from the
 * topology table, with admin credentials (NATS_URL, NATS_USER / NATS_PASSWORD or NATS_CREDS,
 * SF_NAMESPACE). Idempotent. `--render-nats-conf` prints the nats-server configuration the same
 * table gives for SF_NAMESPACE instead (infra/nats/nats.conf is the one for `sf`).
 */
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { renderShippedNatsConf, setupJetStream, topology } from '@stageflow/eventlog';
import { jetStreamOptions, loadConfig, openInfrastructure } from '@stageflow/runtime';
import type { Output } from '../output';

export function registerSetup(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('setup')
    .description('create or update the streams, buckets and consumers of SF_NAMESPACE (admin credentials); idempotent')
    .option('--render-nats-conf [file]', 'write the nats-server configuration the permission table gives for SF_NAMESPACE (stdout without a file)')
    .option('--json', 'print what was set up as JSON')
    .action(async (flags: { renderNatsConf?: string | boolean; json?: boolean }) => {
      if (flags.renderNatsConf !== undefined) {
        const conf = renderShippedNatsConf(topology(), loadConfig().namespace);
        if (typeof flags.renderNatsConf === 'string') fs.writeFileSync(flags.renderNatsConf, conf);
        else out.out(conf);
        setExit(0);
        return;
      }
      const config = loadConfig();
      if (config.mode === 'embedded') {
        // The embedded log declares its queues whenever it opens; opening it once is its setup.
        const infra = await openInfrastructure(config);
        await infra.close();
        out.out(flags.json ? JSON.stringify({ mode: 'embedded', home: config.home }) : `embedded log under ${config.home} is set up`);
        setExit(0);
        return;
      }
      const report = await setupJetStream(jetStreamOptions(config));
      if (flags.json) out.out(JSON.stringify(report, null, 2));
      else out.out([`namespace ${report.namespace} is set up`, `  streams: ${report.streams.join(', ')}`, `  consumers: ${report.consumers.join(', ')}`].join('\n'));
      setExit(0);
    });
}
