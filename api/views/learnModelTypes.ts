/**
 * The SDK's model types of a block's metadata. A model trained on features since regenerated (or made
 * stale by an impulse change) is still there, but the SDK's `requiresRetrain` type is recommended.
 */
export function modelTypes(stale: boolean): { availableModelTypes: ('float32' | 'requiresRetrain')[]; recommendedModelType: 'float32' | 'requiresRetrain' } {
  return stale ? { availableModelTypes: ['float32', 'requiresRetrain'], recommendedModelType: 'requiresRetrain' } : { availableModelTypes: ['float32'], recommendedModelType: 'float32' };
}
