// The BackOffice pages, shown only to callers with a platform role (BackOffice or
// CloudAdministrator): feature status messages, the feature catalogue with tenant licenses,
// and credits. Each lives in its own module.

import { messagesPage } from './admin-messages.js';
import { featuresPage } from './admin-features.js';
import { creditsPage } from './admin-credits.js';

export function register(route) {
  route('/admin', (main, params, query, context) => messagesPage(main, params, query, context));
  route('/admin/messages', messagesPage);
  route('/admin/features', featuresPage);
  route('/admin/credits', creditsPage);
}
