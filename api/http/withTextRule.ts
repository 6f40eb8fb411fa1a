import type { z } from 'zod';
import { textProblem, type TextRule } from '../../domain/shared/textRules';

/**
 * Holds a request string to a text rule (bounded, no control or bidirectional-override characters),
 * so the request is refused with its 400 before any command runs; the deciders hold the same rule.
 * Use as `z.string().max(n).superRefine(withTextRule(rule))`: the schema's own messages come first,
 * and the request error puts the field's path in front of this one. Blank values are left to the
 * schema's `min` and to the decider, whose messages say what the field is for.
 */
export const withTextRule =
  (rule: TextRule) =>
  (value: string, ctx: z.RefinementCtx): void => {
    const problem = textProblem(value, 'the value', { ...rule, allowEmpty: true });
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, input: value });
  };
