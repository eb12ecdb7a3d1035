// The console's shell: who the session is (every page names the tenant and partner), the navigation
// (the current page marked), sign out, and the page the path names (pages.js).
import { api, loadSession } from './api.js';
import { PAGES } from './pages.js';

const TITLES = { overview: 'Overview', requests: 'Requests', jobs: 'Jobs', submissions: 'Submissions', quotes: 'Quotes', policies: 'Policies', events: 'Events', webhooks: 'Webhooks' };

async function main() {
  const session = await loadSession();
  const segment = location.pathname.replace(/^\/console\/?/, '').split('/')[0] || 'overview';
  const page = TITLES[segment] ? segment : 'overview';
  const scope = `Tenant ${session.tenant} · Partner ${session.partnerId}`;
  document.getElementById('who').textContent = `${scope}${session.readOnly ? ' · read-only' : ''} · ${session.environment}`;
  document.title = `${TITLES[page]} · ${session.partnerId} (${session.tenant}) · Partner console`;
  document.getElementById('page-title').textContent = TITLES[page];
  for (const a of document.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === `/console/${page}`) a.setAttribute('aria-current', 'page');
  }
  document.getElementById('signout').addEventListener('click', async () => {
    await fetch('/console/logout', { method: 'POST', headers: { 'x-csrf-token': session.csrfToken }, credentials: 'same-origin' });
    location.assign('/console/');
  });
  const content = document.getElementById('content');
  const status = document.getElementById('status');
  const ctx = {
    session,
    params: new URLSearchParams(location.search),
    content,
    say(text, isError = false) {
      status.textContent = text;
      status.classList.toggle('error', isError);
    },
    api,
  };
  try {
    await PAGES[page](ctx);
    document.body.dataset.ready = 'true';
  } catch (err) {
    ctx.say(`The page could not be shown: ${err instanceof Error ? err.message : String(err)}`, true);
    document.body.dataset.ready = 'error';
  }
}

void main();
