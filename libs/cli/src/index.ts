export { main } from './main';
export { startEngine, type Engine } from './engine';
export type { Output } from './output';
