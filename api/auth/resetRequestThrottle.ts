import { TooManyAttemptsError, type ThrottleKey } from './loginThrottle';
import { WindowedCounts } from './windowedCounts';

export interface ResetRequestSettings {
  windowMs: number;
  /** Reset e-mails one account receives per window, whoever asks; later requests send nothing. */
  mailsPerAccount: number;
  /** Reset requests one address makes per window, for any accounts; later ones are refused with 429. */
  requestsPerAddress: number;
  maxEntries: number;
}

export const DEFAULT_RESET_REQUESTS: ResetRequestSettings = { windowMs: 15 * 60_000, mailsPerAccount: 3, requestsPerAddress: 30, maxEntries: 20_000 };

/**
 * Throttles password-reset requests, each of which would send an e-mail. Per account, beyond the
 * cap, the request still answers success but sends nothing: the answer must be the same for every
 * e-mail address, and the person who needs the mail already has one with a valid code (the latest
 * code stays valid for its hour). Per address, beyond a higher cap, the request is refused with
 * 429; that count covers known and unknown addresses alike, so it tells nothing about accounts.
 */
export class ResetRequestThrottle {
  // Also used for activation-code e-mails a signed-in user asks for: they too carry a code, so they
  // share the account's cap.
  private readonly accounts: WindowedCounts;
  private readonly addresses: WindowedCounts;

  constructor(
    private readonly settings: ResetRequestSettings = DEFAULT_RESET_REQUESTS,
    private readonly clock: () => number = Date.now,
  ) {
    this.accounts = new WindowedCounts(settings.windowMs, settings.maxEntries, clock);
    this.addresses = new WindowedCounts(settings.windowMs, settings.maxEntries, clock);
  }

  get sizes(): { accounts: number; addresses: number } {
    return { accounts: this.accounts.size, addresses: this.addresses.size };
  }

  /**
   * Counts one request: whether its e-mail may be sent, and if not, in how many seconds the account
   * may get one again; throws 429 when the address asked too often.
   */
  admit(key: ThrottleKey): { send: boolean; retryAfterSeconds: number } {
    const address = this.addresses.entry(key.address);
    if (address.count >= this.settings.requestsPerAddress) {
      throw new TooManyAttemptsError((address.since + this.settings.windowMs - this.clock()) / 1000, 'password reset requests');
    }
    address.count++;
    const account = this.accounts.entry(key.account);
    account.count++;
    const send = account.count <= this.settings.mailsPerAccount;
    return { send, retryAfterSeconds: send ? 0 : (account.since + this.settings.windowMs - this.clock()) / 1000 };
  }
}
