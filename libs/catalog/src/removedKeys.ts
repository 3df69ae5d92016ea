/** Keys of the older dialect: each fails load with a message naming its replacement. */
export const REMOVED_KEYS: Readonly<Record<string, string>> = {
  needs: `"needs" is no longer supported — declare the wiring on the source stage's "route" instead`,
  fork: `"fork" is no longer supported — use "route" instead; listed route targets always run`,
  feedback_loop: `"feedback_loop" is no longer supported — use a "type: loop" entry inside "route" instead`,
  route_select: `"route_select" is no longer supported — listed route targets always run`,
  allow_none: `"allow_none" is no longer supported — listed route targets always run`,
  clonable: `"clonable" is no longer supported — use a Clone Chain (emitter -> clone child -> Join) instead`,
  clone_actions: `"clone_actions" is no longer supported — use a Clone Chain (emitter -> clone child -> Join) instead`,
};

export function isRemovedKey(key: string): boolean {
  return Object.prototype.hasOwnProperty.call(REMOVED_KEYS, key);
}
