import { generate } from 'otplib';

/**
 * Tokens for the previous, current and next 30-second steps, all inside the server's ±30 s window.
 * Waits first if the current step is about to end, so a test does not straddle a step boundary.
 */
export async function totpSteps(key: string, needSeconds = 5): Promise<{ previous: string; current: string; next: string }> {
  const intoStep = (Date.now() / 1000) % 30;
  if (intoStep > 30 - needSeconds) await new Promise((r) => setTimeout(r, (30 - intoStep + 0.2) * 1000));
  const step = Math.floor(Date.now() / 1000 / 30);
  const at = (s: number) => generate({ secret: key, epoch: s * 30 + 15 });
  return { previous: await at(step - 1), current: await at(step), next: await at(step + 1) };
}
