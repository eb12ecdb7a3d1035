// Submission service configuration (environment variables; see README "Configuration").
import { EnvReader, readBase, readDb, type BaseConfig, type DbConfig } from '@partner/shared/config';

export interface SubmissionConfig extends BaseConfig, DbConfig {
  grpcPort: number;
}

export function readSubmissionConfig(env = new EnvReader()): Readonly<SubmissionConfig> {
  return env.done({
    ...readBase(env, 'submission', 9483),
    ...readDb(env),
    grpcPort: env.int('SUBMISSION_GRPC_PORT', { default: 50053, min: 0, max: 65535 }),
  });
}
