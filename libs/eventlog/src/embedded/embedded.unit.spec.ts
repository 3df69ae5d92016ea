import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventLogContract } from '../contract';
import { openEmbedded } from './open';

describeEventLogContract('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sf-eventlog-'));
  return {
    namespace: 'sf',
    open: async () => openEmbedded({ dir }),
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
});
