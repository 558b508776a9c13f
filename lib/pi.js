// pi-native/pi: drop-in for @r3b1s/pi-repair-layer/pi.
import { runRepairPipeline } from './core.js'

export class UnrepairableToolInputError extends Error {
  constructor(result) {
    super(result.retryMessage ?? 'Tool input could not be repaired safely.')
    this.name = 'UnrepairableToolInputError'
    this.result = result
  }
}

/** Wrap a tool definition its owner hands in; chains the owner's own prepareArguments first. */
export function adaptToolDefinition(definition, options = {}) {
  const ownerPrepareArguments = definition.prepareArguments
  return {
    ...definition,
    prepareArguments(input) {
      const result = runRepairPipeline({
        input,
        config: { ...options, toolName: definition.name, schema: definition.parameters, ownerPrepareArguments },
      })
      if (result.outcome === 'unrepairable') {
        if (options.unrepairable === 'passthrough') return input
        throw new UnrepairableToolInputError(result)
      }
      return result.args
    },
  }
}
