/** Every migration, in order. A static provider: no directory scan, works from a bundle. */
import type { Migration, MigrationProvider } from 'kysely';
import { init } from './0001_init';
import { analyticsViews } from './0002_analytics_views';

export const migrations: Readonly<Record<string, Migration>> = {
  '0001_init': init,
  '0002_analytics_views': analyticsViews,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};
