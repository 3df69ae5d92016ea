/** Every migration, in order. A static provider: no directory scan, works from a bundle. */
import type { Migration, MigrationProvider } from 'kysely';
import { init } from './0001_init';
import { analyticsViews } from './0002_analytics_views';
import { archivePerEvent } from './0003_archive_per_event';
import { undecodableMessages } from './0004_undecodable_messages';

export const migrations: Readonly<Record<string, Migration>> = {
  '0001_init': init,
  '0002_analytics_views': analyticsViews,
  '0003_archive_per_event': archivePerEvent,
  '0004_undecodable_messages': undecodableMessages,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};
