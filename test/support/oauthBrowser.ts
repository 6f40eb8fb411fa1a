// A browser for the OAuth pages' end-to-end tests: cookies kept, redirects followed, forms read off
// the page. The service answers for PUBLIC_URL (the issuer): requests to it go to its real address.
export const ISSUER = 'http://studio.test';
export const REDIRECT = 'http://localhost:3000/cb';

/** A browser: cookies kept, redirects followed up to the application's redirect URI, forms read off the page. */
export class Browser {
  private readonly jar = new Map<string, string>();
  /** `serviceUrl`: the service's address, or one chosen at each request (a balancer in front of several processes). */
  constructor(private readonly serviceUrl: string | (() => string)) {}

  async open(url: string, init: { method?: string; form?: Record<string, string>; origin?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (init.method === 'POST') headers.origin = init.origin ?? ISSUER;
    const base = typeof this.serviceUrl === 'string' ? this.serviceUrl : this.serviceUrl();
    const answer = await fetch(new URL(url, ISSUER).href.replace(ISSUER, base), {
      method: init.method ?? 'GET',
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const cookie of answer.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return answer;
  }

  /** Follows redirects: the page reached, or the redirect to the application. */
  async follow(url: string, init: { method?: string; form?: Record<string, string>; origin?: string } = {}): Promise<{ page?: Page; callback?: URL; status: number }> {
    let answer = await this.open(url, init);
    let at = new URL(url, ISSUER);
    while (answer.status >= 300 && answer.status < 400) {
      const next = new URL(answer.headers.get('location')!, at);
      if (next.href.startsWith(REDIRECT)) return { callback: next, status: answer.status };
      at = next;
      answer = await this.open(next.href);
    }
    return { page: new Page(at, await answer.text(), answer.headers), status: answer.status };
  }

  /** Fills the page's form (the one whose button has this value, if given) and submits it. */
  submit(page: Page, fields: Record<string, string>, button?: { name: string; value: string }, origin?: string) {
    const form = page.form();
    return this.follow(form.action, { method: 'POST', form: { ...form.hidden, ...fields, ...(button ? { [button.name]: button.value } : {}) }, ...(origin ? { origin } : {}) });
  }
}

export class Page {
  constructor(
    readonly url: URL,
    readonly html: string,
    readonly headers: Headers,
  ) {}
  get title(): string {
    return /<title>([^<]*)<\/title>/.exec(this.html)?.[1] ?? '';
  }
  form(): { action: string; hidden: Record<string, string>; fields: string[] } {
    const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(this.html);
    if (!form) throw new Error(`no form on ${this.url}: ${this.html.slice(0, 300)}`);
    const hidden = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    const fields = [...form[2]!.matchAll(/name="([^"]+)"/g)].map((m) => m[1]!);
    return { action: form[1]!, hidden, fields };
  }
}

