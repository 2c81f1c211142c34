import { describeFixtures } from './support/webhook-fixtures';

describeFixtures('sentry');
