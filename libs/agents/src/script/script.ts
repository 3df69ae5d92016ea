/**
 * The deterministic script agent. Guarantees: attempt n follows the script's attempt n (the last
 * one repeats); steps run in order, each stage tool through the host; `end_turn` ends the turn
 * and the following steps form the next turn (reminder turns consume them); on a park the next
 * step index is kept in `memory.step`, so a resume — on any replica — continues after the
 * ask_operator step; tool errors do not stop the script (the next step may be the fix).
 */
import { timerDelayMs } from '@stageflow/domain';
import type { AgentBackend, AgentSession, TurnResult } from '../backend';
import { loadScript, type AgentScript, type ScriptStep } from './script-file';

export class ScriptBackend implements AgentBackend {
  readonly name = 'script';

  constructor(readonly script: AgentScript) {}

  static async fromFile(file: string): Promise<ScriptBackend> {
    return new ScriptBackend(await loadScript(file));
  }

  async startTurn(session: AgentSession): Promise<TurnResult> {
    const attempts = this.script.stages[session.stage.id];
    if (!attempts) return { kind: 'ended', text: `the script has no steps for stage ${session.stage.id}` };
    const steps = attempts[Math.min(session.attempt, attempts.length) - 1]!;
    const { host, memory } = session;
    let index = typeof memory.step === 'number' ? memory.step : 0;
    while (index < steps.length) {
      if (session.signal.aborted) return { kind: 'aborted' };
      const step = steps[index]!;
      index += 1;
      memory.step = index;
      const result = await this.runStep(step, session);
      if (result) return result;
      if (host.shouldStop) return { kind: 'ended' };
    }
    return { kind: 'ended', text: 'script steps exhausted' };
  }

  /** Runs one step; a TurnResult ends the turn. */
  private async runStep(step: ScriptStep, session: AgentSession): Promise<TurnResult | undefined> {
    const { host } = session;
    switch (step.kind) {
      case 'write_file':
        await host.call('write_file', { path: step.path, content: step.content });
        return undefined;
      case 'write_artifact':
        await host.call('write_stage_artifact', { path: step.path, content: step.content });
        return undefined;
      case 'run':
        await host.call('run_command', { command: step.command, ...(step.timeout_ms ? { timeout_ms: step.timeout_ms } : {}) });
        return session.signal.aborted ? { kind: 'aborted' } : undefined;
      case 'ask_operator':
        await host.call('ask_operator', step.args);
        return undefined;
      case 'emit':
        await host.call('emit_stage_envelope', step.envelope);
        return undefined;
      case 'end_turn':
        return { kind: 'ended', text: 'end_turn' };
      case 'provider_error':
        return { kind: 'provider_error', message: step.message };
      case 'sleep':
        return (await sleep(step.ms, session.signal)) ? undefined : { kind: 'aborted' };
      default: {
        const unreachable: never = step;
        throw new Error(`unknown script step ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, timerDelayMs(ms));
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
