/** The projector: batches of run decisions (log messages of events) → read-model rows, live or as a full rebuild. */
export { project, FoldCache, type ProjectOptions, type ProjectResult } from './projection/project';
export { Projector, runProjector, type ProjectorOptions, type ProjectorMetrics } from './projection/projector';
export { rebuild, type RebuildOptions, type RebuildResult } from './projection/rebuild';
export { readCheckpoint, DEFAULT_PROJECTOR } from './projection/checkpoint';
export { BLOB_THRESHOLD } from './projection/tables';
export { UndecodableMessageError, type EventAdmission } from './projection/decode';
